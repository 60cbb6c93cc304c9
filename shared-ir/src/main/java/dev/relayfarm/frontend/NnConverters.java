package dev.relayfarm.frontend;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** ONNX neural-network operators: Conv, Gemm, MatMul, pooling, normalization, softmax. */
final class NnConverters {
    private NnConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Conv", NnConverters::conv);
        b.add("Gemm", NnConverters::gemm);
        b.add("MatMul", NnConverters::matmul);
        b.add("MaxPool", n -> pool(n, "nn.max_pool2d"));
        b.add("AveragePool", n -> pool(n, "nn.avg_pool2d"));
        b.add("GlobalAveragePool", n -> List.of(n.call("nn.global_avg_pool2d", spatial2d(n))));
        b.add("GlobalMaxPool", n -> List.of(n.call("nn.global_max_pool2d", spatial2d(n))));
        b.add("BatchNormalization", NnConverters::batchNorm);
        b.add("Softmax", n -> softmax(n, "nn.softmax"));
        b.add("LogSoftmax", n -> softmax(n, "nn.log_softmax"));
        b.add("Dropout", NnConverters::dropout);
        b.add("PRelu", n -> {
            // ONNX PRelu broadcasts the slope; the common per-channel case maps to nn.prelu.
            TensorType slope = n.inputType(1);
            TensorType x = n.inputType(0);
            if (slope.rank() >= 1 && x.rank() >= 2 && slope.shape().stream().skip(1).allMatch(d -> d.equals(Dim.of(1)))
                    && (slope.rank() == x.rank() - 1)) {
                Expr alpha = n.call("reshape", List.of(n.input(1)), "newshape", new long[] {-1});
                return List.of(n.call("nn.prelu", List.of(n.input(0), alpha), "axis", 1L));
            }
            // General broadcast: where(x < 0, slope * x, x).
            Expr x0 = n.input(0);
            Expr zero = ElementwiseConverters.scalarLike(n, 0, 0);
            return List.of(n.call("where", n.call("less", x0, zero), n.call("multiply", n.input(1), x0), x0));
        });
        b.add("LRN", n -> {
            long size = n.attrInt("size", -1);
            if (size < 1) throw n.unsupported("attribute 'size' is required");
            return List.of(n.call("nn.lrn", List.of(n.input(0)), "size", size, "axis", 1L,
                    "alpha", (double) n.attrFloat("alpha", 1e-4f), "beta", (double) n.attrFloat("beta", 0.75f),
                    "bias", (double) n.attrFloat("bias", 1f)));
        });
    }

    /** Only 2-D spatial (NCHW) operators are converted; others are named as unsupported. */
    private static Expr spatial2d(OnnxNode n) {
        if (n.inputRank(0) != 4) throw n.unsupported(n.opType() + " on rank-" + n.inputRank(0) + " input (only 2-D NCHW is supported)");
        return n.input(0);
    }

    /** Explicit [top, left, bottom, right] padding, resolving auto_pad from static input dims. */
    private static long[] pads(OnnxNode n, long[] kernel, long[] strides, long[] dilations) {
        String autoPad = n.attrString("auto_pad", "NOTSET");
        long[] pads = n.attrInts("pads");
        switch (autoPad) {
            case "NOTSET" -> {
                return pads == null ? new long[4] : pads;
            }
            case "VALID" -> {
                return new long[4];
            }
            case "SAME_UPPER", "SAME_LOWER" -> {
                TensorType x = n.inputType(0);
                long[] out = new long[4];
                for (int i = 0; i < 2; i++) {
                    Dim d = x.shape().get(2 + i);
                    if (!d.isStatic()) throw n.unsupported("auto_pad=" + autoPad + " needs a static spatial size, got " + d);
                    long in = d.value();
                    long outSize = (in + strides[i] - 1) / strides[i];
                    long total = Math.max(0, (outSize - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
                    long small = total / 2;
                    long big = total - small;
                    out[i] = autoPad.equals("SAME_UPPER") ? small : big;
                    out[i + 2] = autoPad.equals("SAME_UPPER") ? big : small;
                }
                return out;
            }
            default -> throw n.unsupported("auto_pad=" + autoPad + " is not supported");
        }
    }

    private static long[] ints(OnnxNode n, String name, long dflt) {
        long[] v = n.attrInts(name);
        if (v == null) return new long[] {dflt, dflt};
        if (v.length != 2) throw n.unsupported("attribute '" + name + "' has " + v.length + " values (only 2-D is supported)");
        return v;
    }

    private static List<Expr> conv(OnnxNode n) {
        spatial2d(n);
        TensorType w = n.inputType(1);
        if (w.rank() != 4) throw n.unsupported("weight of rank " + w.rank() + " (only 2-D convolution is supported)");
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) kernel = new long[] {w.shape().get(2).value(), w.shape().get(3).value()};
        long[] strides = ints(n, "strides", 1);
        long[] dilations = ints(n, "dilations", 1);
        long[] pads = pads(n, kernel, strides, dilations);
        long group = n.attrInt("group", 1);
        Expr out = n.call("nn.conv2d", List.of(n.input(0), n.input(1)), "strides", strides, "padding", pads,
                "dilation", dilations, "groups", group, "channels", w.shape().get(0).value(), "kernel_size", kernel);
        if (n.hasInput(2)) out = n.call("nn.bias_add", List.of(out, n.input(2)), "axis", 1L);
        return List.of(out);
    }

    private static List<Expr> gemm(OnnxNode n) {
        Expr a = n.input(0);
        Expr b = n.input(1);
        double alpha = n.attrFloat("alpha", 1f);
        double beta = n.attrFloat("beta", 1f);
        n.ignore("broadcast"); // opset < 7: C always broadcasts in our conversion
        if (n.attrInt("transA", 0) != 0) a = n.call("transpose", List.of(a), "axes", new long[] {1, 0});
        // nn.dense computes data · weightᵀ, so an untransposed B [K, N] is transposed to [N, K].
        if (n.attrInt("transB", 0) == 0) b = n.call("transpose", List.of(b), "axes", new long[] {1, 0});
        Expr y = n.call("nn.dense", a, b);
        if (alpha != 1.0) y = n.call("multiply", y, ElementwiseConverters.scalarLike(n, 0, alpha));
        if (n.hasInput(2)) {
            Expr c = n.input(2);
            if (beta != 1.0) c = n.call("multiply", c, ElementwiseConverters.scalarLike(n, 2, beta));
            y = n.call("add", y, c);
        }
        return List.of(y);
    }

    /** numpy matmul: 1-D operands are promoted and the added dim removed; batch dims broadcast. */
    private static List<Expr> matmul(OnnxNode n) {
        TensorType ta = n.inputType(0);
        TensorType tb = n.inputType(1);
        Expr a = n.input(0);
        Expr b = n.input(1);
        if (ta.rank() == 2 && tb.rank() == 2) return List.of(n.call("nn.matmul", a, b));
        boolean vecA = ta.rank() == 1, vecB = tb.rank() == 1;
        if (vecA) a = n.call("expand_dims", List.of(a), "axis", 0L, "num_newaxis", 1L);
        if (vecB) b = n.call("expand_dims", List.of(b), "axis", 1L, "num_newaxis", 1L);
        TensorType ea = (TensorType) n.typeOf(a);
        TensorType eb = (TensorType) n.typeOf(b);
        Expr y;
        if (ea.rank() == 2 && eb.rank() == 2) {
            y = n.call("nn.matmul", a, b);
        } else {
            List<Dim> batchA = ea.shape().subList(0, ea.rank() - 2);
            List<Dim> batchB = eb.shape().subList(0, eb.rank() - 2);
            List<Dim> batch = broadcastDims(n, batchA, batchB);
            if (!batch.stream().allMatch(Dim::isStatic) || !ea.isStatic() || !eb.isStatic()) {
                throw n.unsupported("batched MatMul with dynamic shapes " + ea + " x " + eb + " is not supported");
            }
            long bsz = batch.stream().mapToLong(Dim::value).reduce(1, (x, z) -> x * z);
            long m = ea.shape().get(ea.rank() - 2).value(), k = ea.shape().get(ea.rank() - 1).value();
            long nn = eb.shape().get(eb.rank() - 1).value();
            Expr a3 = n.call("reshape", List.of(broadcastTo(n, a, batch, ea)), "newshape", new long[] {bsz, m, k});
            Expr b3 = n.call("reshape", List.of(broadcastTo(n, b, batch, eb)), "newshape", new long[] {bsz, k, nn});
            Expr y3 = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", false, "transpose_b", false);
            long[] outShape = new long[batch.size() + 2];
            for (int i = 0; i < batch.size(); i++) outShape[i] = batch.get(i).value();
            outShape[batch.size()] = m;
            outShape[batch.size() + 1] = nn;
            y = n.call("reshape", List.of(y3), "newshape", outShape);
        }
        if (vecA) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 2});
        if (vecB) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 1});
        return List.of(y);
    }

    private static Expr broadcastTo(OnnxNode n, Expr x, List<Dim> batch, TensorType t) {
        List<Dim> target = new ArrayList<>(batch);
        target.addAll(t.shape().subList(t.rank() - 2, t.rank()));
        if (target.equals(t.shape())) return x;
        return n.call("broadcast_to", List.of(x), "shape", target.stream().mapToLong(Dim::value).toArray());
    }

    static List<Dim> broadcastDims(OnnxNode n, List<Dim> a, List<Dim> b) {
        int rank = Math.max(a.size(), b.size());
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < rank; i++) {
            Dim da = i < rank - a.size() ? Dim.of(1) : a.get(i - (rank - a.size()));
            Dim db = i < rank - b.size() ? Dim.of(1) : b.get(i - (rank - b.size()));
            if (da.equals(Dim.of(1))) out.add(db);
            else if (db.equals(Dim.of(1)) || da.equals(db)) out.add(da);
            else throw n.unsupported("shapes " + a + " and " + b + " do not broadcast");
        }
        return out;
    }

    private static List<Expr> pool(OnnxNode n, String op) {
        spatial2d(n);
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null || kernel.length != 2) throw n.unsupported("kernel_shape must have 2 values (only 2-D pooling is supported)");
        long[] strides = ints(n, "strides", 1);
        long[] dilations = ints(n, "dilations", 1);
        long[] pads = pads(n, kernel, strides, dilations);
        boolean ceil = n.attrInt("ceil_mode", 0) != 0;
        if (n.hasOutput(1)) throw n.unsupported("the Indices output of MaxPool is not supported");
        n.expectInt("storage_order", 0);
        List<Object> kv = new ArrayList<>(List.of("pool_size", kernel, "strides", strides, "dilation", dilations, "padding", pads, "ceil_mode", ceil));
        if (op.equals("nn.avg_pool2d")) {
            kv.add("count_include_pad");
            kv.add(n.attrInt("count_include_pad", 0) != 0);
        }
        return List.of(n.call(op, List.of(n.input(0)), kv.toArray()));
    }

    private static List<Expr> batchNorm(OnnxNode n) {
        if (n.opset() < 9) n.expectInt("spatial", 1);
        n.expectInt("training_mode", 0);
        n.ignore("momentum", "is_test", "consumed_inputs"); // training-only / legacy hints
        if (n.hasOutput(1) || n.hasOutput(2)) throw n.unsupported("training outputs (running mean/var) are not supported");
        Expr bn = n.call("nn.batch_norm", List.of(n.input(0), n.input(1), n.input(2), n.input(3), n.input(4)),
                "axis", 1L, "epsilon", (double) n.attrFloat("epsilon", 1e-5f));
        return List.of(new TupleGetItem(bn, 0));
    }

    private static List<Expr> softmax(OnnxNode n, String op) {
        TensorType t = n.inputType(0);
        int rank = t.rank();
        long axis = n.attrInt("axis", n.opset() < 13 ? 1 : -1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= Math.max(rank, 1)) throw n.unsupported("axis " + n.attrInt("axis", 0) + " is out of range for rank " + rank);
        if (n.opset() >= 13 || axis == rank - 1) return List.of(n.call(op, List.of(n.input(0)), "axis", axis));
        // Before opset 13 the input is coerced to 2-D [prod(d < axis), prod(d >= axis)].
        if (!t.isStatic()) throw n.unsupported("opset < 13 softmax over axes " + axis + ".. of a dynamic shape is not supported");
        int[] s = t.staticShape();
        long outer = Arrays.stream(s, 0, (int) axis).asLongStream().reduce(1, (x, y) -> x * y);
        long inner = Arrays.stream(s, (int) axis, rank).asLongStream().reduce(1, (x, y) -> x * y);
        Expr flat = n.call("reshape", List.of(n.input(0)), "newshape", new long[] {outer, inner});
        Expr sm = n.call(op, List.of(flat), "axis", 1L);
        return List.of(n.call("reshape", List.of(sm), "newshape", Arrays.stream(s).asLongStream().toArray()));
    }

    private static List<Expr> dropout(OnnxNode n) {
        // Inference: identity. The mask output, if asked for, is all true.
        n.ignore("ratio", "seed", "is_test", "consumed_inputs");
        if (n.hasInput(2)) {
            long[] training = n.constantInts(2, "training_mode");
            if (training.length > 0 && training[0] != 0) throw n.unsupported("training_mode=True is not supported");
        }
        List<Expr> outs = new ArrayList<>();
        outs.add(n.input(0));
        if (n.hasOutput(1)) {
            outs.add(n.call("ones_like", List.of(n.call("cast", List.of(n.input(0)), "dtype", "bool"))));
        }
        return outs;
    }
}
