package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX RNN, GRU and LSTM, unrolled over the static sequence length into Relay dataflow: per time
 * step and direction, the gate pre-activations are {@code dense(x_t, W) + dense(h, R) + biases},
 * split into the operator's gates (RNN: i; GRU: z, r, h; LSTM: i, o, f, c — ONNX's order).
 *
 * <p>sequence_lens is honoured by masking: at step t a batch entry with length ≤ t keeps its
 * state and produces zeros in Y. The reverse direction walks t from the end down to 0 with the
 * same mask, which visits exactly its first {@code len} steps backwards, as ONNX specifies.
 * ReverseSequence, which reverses such variable-length sequences, lives here too.
 */
final class RecurrentConverters {
    private RecurrentConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("RNN", n -> convert(n, Kind.RNN));
        b.add("GRU", n -> convert(n, Kind.GRU));
        b.add("LSTM", n -> convert(n, Kind.LSTM));
        b.add("ReverseSequence", RecurrentConverters::reverseSequence);
    }

    private enum Kind {
        RNN(1, List.of("Tanh")),
        GRU(3, List.of("Sigmoid", "Tanh")),
        LSTM(4, List.of("Sigmoid", "Tanh", "Tanh"));

        final int gates;
        final List<String> defaultActivations;

        Kind(int gates, List<String> defaultActivations) {
            this.gates = gates;
            this.defaultActivations = defaultActivations;
        }
    }

    /** Longest sequence unrolled into dataflow (speech and text models use hundreds to a few thousand steps). */
    static final int MAX_UNROLLED_STEPS = 100_000;

    /** An activation with its alpha/beta (NaN when the function takes none). */
    private record Activation(String name, double alpha, double beta) {}

    private static List<Expr> convert(OnnxNode n, Kind kind) {
        TensorType xt = n.inputType(0);
        if (!xt.isStatic()) throw n.unsupported("the input must have a static shape (the sequence is unrolled), got " + xt);
        long layout = n.attrInt("layout", 0);
        if (layout != 0 && layout != 1) throw n.unsupported("layout must be 0 or 1, got " + layout);
        String direction = n.attrString("direction", "forward");
        int dirs = switch (direction) {
            case "forward", "reverse" -> 1;
            case "bidirectional" -> 2;
            default -> throw n.unsupported("direction must be forward, reverse or bidirectional, got \"" + direction + "\"");
        };
        long hidden = n.attrInt("hidden_size", -1);
        if (hidden <= 0) hidden = n.inputType(2).shape().get(2).value(); // R is [dirs, gates*hidden, hidden]
        double clip = n.hasAttr("clip") ? n.attrFloat("clip", 0) : Double.NaN;
        long linearBeforeReset = kind == Kind.GRU ? n.attrInt("linear_before_reset", 0) : 0;
        if (kind == Kind.LSTM) n.expectInt("input_forget", 0);
        List<Activation> acts = activations(n, kind, dirs);

        DType dt = xt.dtype();
        Expr x = layout == 0 ? n.input(0) : n.call("transpose", List.of(n.input(0)), "axes", new long[] {1, 0, 2});
        int[] xs = layout == 0 ? xt.staticShape() : new int[] {xt.staticShape()[1], xt.staticShape()[0], xt.staticShape()[2]};
        if (xs[0] > MAX_UNROLLED_STEPS) {
            // each step becomes a few dozen Relay nodes: 10^8 steps built IR until the heap ran out, minutes later
            throw n.unsupported("sequence length " + xs[0] + " is too long to unroll; the limit is " + MAX_UNROLLED_STEPS + " steps");
        }
        int seq = xs[0], batch = xs[1];
        Expr mask = null; // [seq] of [batch, 1] bools, from sequence_lens
        Expr lens = n.hasInput(4) ? n.call("expand_dims", List.of(QuantConverters.cast(n, n.input(4), DType.INT64)), "axis", 1L, "num_newaxis", 1L) : null;

        List<Expr> ys = new ArrayList<>(), hs = new ArrayList<>(), cs = new ArrayList<>();
        for (int d = 0; d < dirs; d++) {
            boolean reverse = direction.equals("reverse") || d == 1;
            Expr w = pick(n, n.input(1), d);
            Expr r = pick(n, n.input(2), d);
            Expr wb = null, rb = null;
            if (n.hasInput(3)) {
                Expr bias = pick(n, n.input(3), d);
                Expr parts = n.call("split", List.of(bias), "indices_or_sections", 2L, "axis", 0L);
                wb = new TupleGetItem(parts, 0);
                rb = new TupleGetItem(parts, 1);
            }
            Expr h = initialState(n, 5, d, layout, batch, hidden, dt);
            Expr c = kind == Kind.LSTM ? initialState(n, 6, d, layout, batch, hidden, dt) : null;
            Expr[] peep = new Expr[3];
            if (kind == Kind.LSTM && n.hasInput(7)) {
                Expr p = n.call("split", List.of(pick(n, n.input(7), d)), "indices_or_sections", 3L, "axis", 0L);
                for (int k = 0; k < 3; k++) peep[k] = new TupleGetItem(p, k);
            }
            List<Activation> da = acts.subList(d * kind.defaultActivations.size(), (d + 1) * kind.defaultActivations.size());
            Expr[] yOut = new Expr[seq];
            for (int s = 0; s < seq; s++) {
                int t = reverse ? seq - 1 - s : s;
                Expr xt1 = n.call("take", List.of(x, OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {t}))), "axis", 0L, "mode", "fast");
                Expr gx = n.call("nn.dense", xt1, w);
                if (wb != null) gx = n.call("add", gx, wb);
                Expr hNew, cNew = null;
                switch (kind) {
                    case RNN -> {
                        Expr pre = n.call("add", gx, dense(n, h, r, rb));
                        hNew = act(n, da.get(0), clip(n, pre, clip), dt);
                    }
                    case GRU -> {
                        Expr gxs = n.call("split", List.of(gx), "indices_or_sections", 3L, "axis", 1L);
                        // z and r use R's first 2*hidden rows; the candidate's recurrent term depends on r.
                        Expr rSplit = n.call("split", List.of(r), "indices_or_sections", 3L, "axis", 0L);
                        Expr rbSplit = rb == null ? null : n.call("split", List.of(rb), "indices_or_sections", 3L, "axis", 0L);
                        Expr[] gh = new Expr[3];
                        for (int k = 0; k < 2; k++) gh[k] = dense(n, h, new TupleGetItem(rSplit, k), rbSplit == null ? null : new TupleGetItem(rbSplit, k));
                        Expr z = act(n, da.get(0), clip(n, n.call("add", new TupleGetItem(gxs, 0), gh[0]), clip), dt);
                        Expr rg = act(n, da.get(0), clip(n, n.call("add", new TupleGetItem(gxs, 1), gh[1]), clip), dt);
                        Expr rh = new TupleGetItem(rSplit, 2);
                        Expr rbh = rbSplit == null ? null : new TupleGetItem(rbSplit, 2);
                        Expr cand = linearBeforeReset != 0
                                ? n.call("multiply", rg, dense(n, h, rh, rbh))
                                : dense(n, n.call("multiply", rg, h), rh, rbh);
                        Expr hh = act(n, da.get(1), clip(n, n.call("add", new TupleGetItem(gxs, 2), cand), clip), dt);
                        Expr one = QuantConverters.scalar(dt, 1);
                        hNew = n.call("add", n.call("multiply", n.call("subtract", one, z), hh), n.call("multiply", z, h));
                    }
                    case LSTM -> {
                        Expr pre = n.call("add", gx, dense(n, h, r, rb));
                        Expr g = n.call("split", List.of(pre), "indices_or_sections", 4L, "axis", 1L);
                        Expr iPre = new TupleGetItem(g, 0), oPre = new TupleGetItem(g, 1), fPre = new TupleGetItem(g, 2), cPre = new TupleGetItem(g, 3);
                        if (peep[0] != null) {
                            iPre = n.call("add", iPre, n.call("multiply", peep[0], c));
                            fPre = n.call("add", fPre, n.call("multiply", peep[2], c));
                        }
                        Expr i = act(n, da.get(0), clip(n, iPre, clip), dt);
                        Expr f = act(n, da.get(0), clip(n, fPre, clip), dt);
                        Expr cc = act(n, da.get(1), clip(n, cPre, clip), dt);
                        cNew = n.call("add", n.call("multiply", f, c), n.call("multiply", i, cc));
                        if (peep[1] != null) oPre = n.call("add", oPre, n.call("multiply", peep[1], cNew));
                        Expr o = act(n, da.get(0), clip(n, oPre, clip), dt);
                        hNew = n.call("multiply", o, act(n, da.get(2), cNew, dt));
                    }
                    default -> throw new IllegalStateException();
                }
                if (lens != null) {
                    Expr live = n.call("less", OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {t})), lens);
                    yOut[t] = n.call("where", live, hNew, n.call("zeros_like", hNew));
                    h = n.call("where", live, hNew, h);
                    if (cNew != null) c = n.call("where", live, cNew, c);
                } else {
                    yOut[t] = hNew;
                    h = hNew;
                    if (cNew != null) c = cNew;
                }
            }
            ys.add(n.call("stack", List.of(new Tuple(Arrays.asList(yOut))), "axis", 0L)); // [seq, batch, hidden]
            hs.add(h);
            cs.add(c);
        }
        Expr y = n.call("stack", List.of(new Tuple(ys)), "axis", 1L); // [seq, dirs, batch, hidden]
        Expr yh = n.call("stack", List.of(new Tuple(hs)), "axis", 0L); // [dirs, batch, hidden]
        Expr yc = kind == Kind.LSTM ? n.call("stack", List.of(new Tuple(cs)), "axis", 0L) : null;
        if (layout == 1) {
            y = n.call("transpose", List.of(y), "axes", new long[] {2, 0, 1, 3});
            yh = n.call("transpose", List.of(yh), "axes", new long[] {1, 0, 2});
            if (yc != null) yc = n.call("transpose", List.of(yc), "axes", new long[] {1, 0, 2});
        }
        List<Expr> outs = new ArrayList<>(List.of(y, yh));
        if (kind == Kind.LSTM) outs.add(yc);
        return outs;
    }

    /** Direction {@code d} of a [dirs, ...] parameter. */
    private static Expr pick(OnnxNode n, Expr p, int d) {
        return n.call("take", List.of(p, OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {d}))), "axis", 0L, "mode", "fast");
    }

    private static Expr dense(OnnxNode n, Expr h, Expr r, Expr rb) {
        Expr y = n.call("nn.dense", h, r);
        return rb == null ? y : n.call("add", y, rb);
    }

    /** initial_h / initial_c of direction d as [batch, hidden], zeros when absent. */
    private static Expr initialState(OnnxNode n, int input, int d, long layout, int batch, long hidden, DType dt) {
        if (!n.hasInput(input)) return OnnxNode.constant(NDArray.zeros(dt, batch, (int) hidden));
        Expr s = n.input(input);
        if (layout == 1) s = n.call("transpose", List.of(s), "axes", new long[] {1, 0, 2});
        return pick(n, s, d);
    }

    private static Expr clip(OnnxNode n, Expr x, double clip) {
        if (Double.isNaN(clip)) return x;
        return n.call("clip", List.of(x), "a_min", -clip, "a_max", clip);
    }

    private static List<Activation> activations(OnnxNode n, Kind kind, int dirs) {
        int per = kind.defaultActivations.size();
        String[] names;
        if (n.hasAttr("activations")) {
            var a = n.proto().getAttributeList().stream().filter(p -> p.getName().equals("activations")).findFirst().orElseThrow();
            names = a.getStringsList().stream().map(bs -> bs.toStringUtf8()).toArray(String[]::new);
            if (names.length != per * dirs) throw n.unsupported("activations has " + names.length + " entries, " + per * dirs + " expected");
        } else {
            names = new String[per * dirs];
            for (int i = 0; i < names.length; i++) names[i] = kind.defaultActivations.get(i % per);
        }
        float[] alphas = n.attrFloats("activation_alpha");
        float[] betas = n.attrFloats("activation_beta");
        int ai = 0, bi = 0;
        List<Activation> out = new ArrayList<>();
        for (String name : names) {
            double[] dflt = switch (name.toLowerCase()) {
                case "relu", "tanh", "sigmoid", "softsign", "softplus" -> new double[] {Double.NaN, Double.NaN};
                case "affine" -> new double[] {1, 0};
                case "leakyrelu" -> new double[] {0.01, Double.NaN};
                case "thresholdedrelu", "elu" -> new double[] {1, Double.NaN};
                case "scaledtanh" -> new double[] {1, 1};
                case "hardsigmoid" -> new double[] {0.2, 0.5};
                default -> throw n.unsupported("activation function \"" + name + "\" is not supported");
            };
            double alpha = dflt[0], beta = dflt[1];
            // Alphas and betas are consumed in order by the functions that take them.
            if (!Double.isNaN(alpha) && alphas != null && ai < alphas.length) alpha = alphas[ai++];
            if (!Double.isNaN(beta) && betas != null && bi < betas.length) beta = betas[bi++];
            out.add(new Activation(name.toLowerCase(), alpha, beta));
        }
        return out;
    }

    private static Expr act(OnnxNode n, Activation a, Expr x, DType dt) {
        return switch (a.name()) {
            case "relu" -> n.call("nn.relu", x);
            case "tanh" -> n.call("tanh", x);
            case "sigmoid" -> n.call("sigmoid", x);
            case "affine" -> n.call("add", n.call("multiply", x, QuantConverters.scalar(dt, a.alpha())), QuantConverters.scalar(dt, a.beta()));
            case "leakyrelu" -> n.call("nn.leaky_relu", List.of(x), "alpha", a.alpha());
            case "thresholdedrelu" -> n.call("where", n.call("greater", x, QuantConverters.scalar(dt, a.alpha())), x, n.call("zeros_like", x));
            case "scaledtanh" -> n.call("multiply", n.call("tanh", n.call("multiply", x, QuantConverters.scalar(dt, a.beta()))), QuantConverters.scalar(dt, a.alpha()));
            case "hardsigmoid" -> n.call("clip", List.of(n.call("add", n.call("multiply", x, QuantConverters.scalar(dt, a.alpha())),
                    QuantConverters.scalar(dt, a.beta()))), "a_min", 0.0, "a_max", 1.0);
            case "elu" -> n.call("where", n.call("less", x, QuantConverters.scalar(dt, 0)),
                    n.call("multiply", n.call("subtract", n.call("exp", x), QuantConverters.scalar(dt, 1)), QuantConverters.scalar(dt, a.alpha())), x);
            case "softsign" -> n.call("divide", x, n.call("add", n.call("abs", x), QuantConverters.scalar(dt, 1)));
            case "softplus" -> n.call("log", n.call("add", n.call("exp", x), QuantConverters.scalar(dt, 1)));
            default -> throw n.unsupported("activation function \"" + a.name() + "\" is not supported");
        };
    }

    /**
     * ReverseSequence: per batch entry b, the first sequence_lens[b] steps along the time axis are
     * reversed, the rest kept. As a gather along the time axis with indices
     * idx[t, b] = t < len[b] ? len[b] - 1 - t : t, broadcast over the other axes.
     */
    private static List<Expr> reverseSequence(OnnxNode n) {
        TensorType xt = n.inputType(0);
        if (!xt.isStatic() || xt.rank() < 2) throw n.unsupported("the input must have a static shape of rank >= 2, got " + xt);
        long batchAxis = n.attrInt("batch_axis", 1), timeAxis = n.attrInt("time_axis", 0);
        if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0))) {
            throw n.unsupported("batch_axis/time_axis must be 0 and 1 in some order, got " + batchAxis + "/" + timeAxis);
        }
        int[] shape = xt.staticShape();
        int steps = shape[(int) timeAxis], batch = shape[(int) batchAxis];
        long[] t = new long[steps];
        for (int i = 0; i < steps; i++) t[i] = i;
        long[] tShape = timeAxis == 0 ? new long[] {steps, 1} : new long[] {1, steps};
        long[] bShape = timeAxis == 0 ? new long[] {1, batch} : new long[] {batch, 1};
        Expr time = n.call("reshape", List.of(OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {steps}, t))), "newshape", tShape);
        Expr lens = n.call("reshape", List.of(QuantConverters.cast(n, n.input(1), DType.INT64)), "newshape", bShape);
        Expr one = OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {1}));
        Expr idx = n.call("where", n.call("less", time, lens), n.call("subtract", n.call("subtract", lens, one), time), time);
        long[] full = new long[xt.rank()];
        for (int i = 0; i < full.length; i++) full[i] = shape[i];
        long[] padded = new long[xt.rank()];
        java.util.Arrays.fill(padded, 1);
        padded[0] = shape[0];
        padded[1] = shape[1];
        idx = n.call("broadcast_to", List.of(n.call("reshape", List.of(idx), "newshape", padded)), "shape", full);
        return List.of(n.call("gather", List.of(n.input(0), idx), "axis", timeAxis));
    }
}
