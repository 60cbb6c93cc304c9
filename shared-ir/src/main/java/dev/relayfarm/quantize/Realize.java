package dev.relayfarm.quantize;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.passes.FunctionPass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.passes.PassInfo;
import dev.relayfarm.types.InferResult;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Quantize step 3 (TVM's {@code QuantizeRealize}): replaces the calibrated simulated-quantize points by integer
 * operators. Values are tracked as (integer expression, dtype, scale per tensor or per channel of an axis):
 *
 * <ul>
 *   <li>a weight point on a constant becomes an int8 constant {@code clip(round(w / s[c]))};
 *   <li>a data point on a float value becomes {@code cast(clip(round(x / s)), "int8")} ({@code "uint8"} for an unsigned
 *       point, [0, 255]; {@code "int16"} / {@code "uint16"} for a point mixed precision widened); on an integer value it
 *       requantizes: {@code s_in[c] / s} as a 31-bit fixed-point multiplier and shift,
 *       {@code (int64(acc) * m0 + 2^(sh-1)) >> sh}, or (config) a float multiply of the accumulator;
 *   <li>conv2d / dense on 8- or 16-bit data and int8 weights get {@code out_dtype="int32"} (int64 when
 *       {@link #accumulator} finds int32 could overflow), scale {@code s_data * s_weight[c]} along the output's
 *       channel axis;
 *   <li>on an int32 accumulator, a per-channel constant bias ({@code nn.bias_add}, {@code add}) is quantized to the
 *       accumulator's scale and relu runs as it is; relu, max-pooling (NCHW) and reshapes run on int8 (per-tensor)
 *       values;
 *   <li>anything else that reads an integer value reads {@code cast(v, "float32") * s} (dequantized), as does the
 *       function's result.
 * </ul>
 *
 * <pre>
 * nn.dense(sq(%x, 0.5f, kind="input"), sq(W, S, kind="weight", axis=0))
 *   ==>  multiply(cast(nn.dense(cast(clip(round(divide(%x, 0.5f)), -127, 127), int8), Wq, out_dtype="int32"), float32), 0.5f * S)
 * </pre>
 *
 * A point with a zero scale (not calibrated) is an error. Not done: asymmetric ranges (zero points), integer add of two quantized branches (they are dequantized),
 * fusing the requantize into the conv's kernel (fuse-ops does that later).
 */
public final class Realize extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("quantize-realize", 0,
            "rewrites calibrated simulated-quantize points into int8 / int32 operators");

    /** The data dtypes an anchor runs on: 8-bit, and 16-bit for mixed precision's widened points. */
    static final java.util.Set<DType> DATA_DTYPES = java.util.Set.of(DType.INT8, DType.UINT8, DType.INT16, DType.UINT16);
    private static final java.util.Set<DType> ACCUMULATORS = java.util.Set.of(DType.INT32, DType.INT64);

    private final QuantizeConfig.Requantize requantize;

    public Realize(QuantizeConfig.Requantize requantize) {
        super(INFO);
        this.requantize = requantize;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        Realizer r = new Realizer(requantize, context.types());
        Expr body = r.rewrite(function.body());
        if (r.q.containsKey(body)) body = r.dequantize(body);
        return body == function.body() ? function : function.withBody(body);
    }

    /** An integer value: its dtype, scale (one value, or one per index of {@code axis}) and rank. */
    record QValue(DType dtype, double[] scale, int axis, int rank) {
        boolean perTensor() {
            return scale.length == 1;
        }
    }

    private static final class Realizer extends ExprRewriter {
        private final QuantizeConfig.Requantize mode;
        private final InferResult types;
        final Map<Expr, QValue> q = new IdentityHashMap<>();
        private final Map<Expr, Expr> dequantized = new IdentityHashMap<>();

        Realizer(QuantizeConfig.Requantize mode, InferResult types) {
            this.mode = mode;
            this.types = types;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            if (pre instanceof Function f && f.isPrimitive()) return pre;
            if (post instanceof Call c && c.callee() instanceof Op op) {
                Expr done = op.name().equals(SimulatedQuantize.NAME) ? point((Call) pre, c) : integerOp(op.name(), (Call) pre, c);
                if (done != null) return done;
            }
            // Anything else reads floats.
            return ExprRewriter.withChildren(post, e -> q.containsKey(e) ? dequantize(e) : e);
        }

        private Expr point(Call pre, Call c) {
            SimulatedQuantize.Attributes a = SimulatedQuantize.parse(c.attrs());
            if (!(pre.args().get(1) instanceof Constant sc)) throw new PassException("quantize-realize: a point's scale must be a constant: " + pre);
            double[] s = doubles(sc.data());
            for (double v : s) {
                if (!(v > 0)) throw new PassException("quantize-realize: point " + a.kind() + " is not calibrated (scale " + v + "); run calibration first");
            }
            Expr data = c.args().get(0);
            int rank = rank(pre.args().get(0));
            DType to = a.nbit() <= 8 ? (a.sign() ? DType.INT8 : DType.UINT8) : (a.sign() ? DType.INT16 : DType.UINT16);
            if (a.kind().equals("weight") && data instanceof Constant w) {
                Constant wq = new Constant(quantizeWeight(w.data(), s, a));
                q.put(wq, new QValue(to, s, s.length == 1 ? -1 : a.axis(), rank));
                return wq;
            }
            if (s.length != 1) throw new PassException("quantize-realize: per-channel scales are for constant weights only: " + pre);
            QValue in = q.get(data);
            Expr out;
            if (in == null) {
                out = cast(clip(Call.op("round", Call.op("divide", data, scalar(s[0]))), a), to);
            } else if (in.dtype().equals(to) && in.perTensor() && in.scale()[0] == s[0]) {
                return data;
            } else {
                out = requantized(data, in, s[0], a, to);
            }
            q.put(out, new QValue(to, s, -1, rank));
            return out;
        }

        /** {@code x} (integer, scale {@code in.scale}) on the scale {@code s}, clipped, as {@code to}. */
        private Expr requantized(Expr x, QValue in, double s, SimulatedQuantize.Attributes a, DType to) {
            int n = in.scale().length;
            double[] m = new double[n];
            for (int i = 0; i < n; i++) m[i] = in.scale()[i] / s;
            if (mode == QuantizeConfig.Requantize.FLOAT || in.dtype().equals(DType.INT64)) {
                // an int64 accumulator (beyond 2^31) times a 31-bit multiplier could leave int64: it is scaled in
                // float64 instead, exact for |acc| < 2^53
                DType f = in.dtype().equals(DType.INT64) ? DType.FLOAT64 : DType.FLOAT32;
                Expr scaled = Call.op("multiply", cast(x, f), channelConstant(f, m, in));
                return cast(clip(Call.op("round", scaled), a), to);
            }
            long[] m0 = new long[n], shift = new long[n], half = new long[n];
            for (int i = 0; i < n; i++) {
                long[] fp = fixedPoint(m[i]);
                m0[i] = fp[0];
                shift[i] = fp[1];
                half[i] = 1L << (fp[1] - 1);
            }
            Expr prod = Call.op("multiply", cast(x, DType.INT64), channelConstant(DType.INT64, m0, in));
            Expr shifted = Call.op("right_shift", Call.op("add", prod, channelConstant(DType.INT64, half, in)), channelConstant(DType.INT64, shift, in));
            return cast(clip(shifted, a), to);
        }

        /** Conv2d / dense on int8, epilogue and transparent ops on integers; null when the op reads floats. */
        private Expr integerOp(String op, Call pre, Call c) {
            if (QuantizeRules.ANCHORS.containsKey(op)) {
                if (c.args().size() != 2) return null;
                QValue x = q.get(c.args().get(0)), w = q.get(c.args().get(1));
                if (x == null || w == null || !x.perTensor() || !DATA_DTYPES.contains(x.dtype()) || !w.dtype().equals(DType.INT8)
                        || !(c.args().get(1) instanceof Constant wq)) return null;
                int rank = rank(pre);
                double[] s = new double[w.scale().length];
                for (int i = 0; i < s.length; i++) s[i] = x.scale()[0] * w.scale()[i];
                DType acc = accumulator(x.dtype(), wq.data());
                Call out = new Call(c.callee(), c.args(), c.attrs().with("out_dtype", AttrValue.of(acc.toString())), c.typeArgs(), c.span());
                q.put(out, new QValue(acc, s, s.length == 1 ? -1 : QuantizeRules.outputChannelAxis(pre, rank), rank));
                return out;
            }
            if (c.args().isEmpty() || !QuantizeRules.EPILOGUE.contains(op) && !QuantizeRules.TRANSPARENT.contains(op)) return null;
            QValue x = q.get(c.args().get(0));
            switch (op) {
                case "nn.bias_add", "add" -> {
                    if (x == null || !ACCUMULATORS.contains(x.dtype()) || c.args().size() != 2 || !(c.args().get(1) instanceof Constant b)) return null;
                    int axis = op.equals("add") ? -1 : OpRegistry.get(op).parseAttrs(c.attrs()) instanceof dev.relayfarm.ops.nn.BiasAdd.BiasAddAttrs ba ? ba.axis() : 1;
                    Constant bq = op.equals("add") ? addBias(b.data(), x) : biasAddBias(b.data(), axis < 0 ? axis + x.rank() : axis, x);
                    if (bq == null) return null;
                    Call out = new Call(c.callee(), List.of(c.args().get(0), bq), c.attrs(), c.typeArgs(), c.span());
                    q.put(out, x);
                    return out;
                }
                case "nn.relu" -> {
                    if (x == null) return null;
                    q.put(c, x);
                    return c;
                }
                case "nn.max_pool2d" -> {
                    if (x == null) return null;
                    String layout = c.attrs().get("layout").map(v -> v instanceof AttrValue.StringValue sv ? sv.value() : "").orElse("NCHW");
                    if (!x.perTensor() && !(layout.equals("NCHW") && x.axis() == 1)) return null;
                    q.put(c, x);
                    return c;
                }
                case "reshape", "nn.batch_flatten" -> {
                    if (x == null || !x.perTensor()) return null;
                    q.put(c, new QValue(x.dtype(), x.scale(), -1, rank(pre)));
                    return c;
                }
                default -> {
                    return null;
                }
            }
        }

        /** {@code nn.bias_add}'s 1-D bias on the accumulator's scale, as int32; null when the axes disagree. */
        private Constant biasAddBias(NDArray b, int axis, QValue x) {
            if (!x.perTensor() && axis != x.axis()) return null;
            int n = b.elementCount();
            if (!x.perTensor() && n != x.scale().length) return null;
            long[] out = new long[n];
            for (int i = 0; i < n; i++) out[i] = toAccumulator(b.getDouble(i) / x.scale()[x.perTensor() ? 0 : i], x.dtype());
            return new Constant(NDArray.fromLongs(x.dtype(), new int[] {n}, out));
        }

        /**
         * {@code add}'s constant on the accumulator's scale: a scalar, or a tensor whose only non-1 dim lines up with
         * the accumulator's channel axis (numpy broadcasting from the right); int32 with the constant's shape.
         */
        private Constant addBias(NDArray b, QValue x) {
            int[] shape = b.shape();
            if (shape.length > x.rank()) return null;
            int channelDim = -1;
            for (int d = 0; d < shape.length && !x.perTensor(); d++) {
                if (shape[d] == 1) continue;
                if (d + x.rank() - shape.length != x.axis() || shape[d] != x.scale().length) return null;
                channelDim = d;
            }
            // a scalar (or all-1 shape) against per-channel scales would need a value per channel: left to floats
            if (!x.perTensor() && channelDim < 0) return null;
            int n = b.elementCount();
            long[] out = new long[n];
            // with one non-1 dim, element i is channel i
            for (int i = 0; i < n; i++) out[i] = toAccumulator(b.getDouble(i) / x.scale()[x.perTensor() ? 0 : i], x.dtype());
            return new Constant(NDArray.fromLongs(x.dtype(), shape.clone(), out));
        }

        Expr dequantize(Expr e) {
            return dequantized.computeIfAbsent(e, k -> {
                QValue v = q.get(k);
                return Call.op("multiply", cast(k, DType.FLOAT32), channelConstant(DType.FLOAT32, v.scale(), v));
            });
        }

        private int rank(Expr original) {
            Type t = types.typeOf(original);
            if (!(t instanceof TensorType tt)) throw new PassException("quantize-realize: expected a tensor, got " + t);
            return tt.rank();
        }
    }

    // ------------------------------------------------------------------ helpers

    /** {@code m = m0 * 2^-shift} with {@code m0} in [2^30, 2^31) and shift in [1, 62]; {m0, shift}. */
    public static long[] fixedPoint(double m) {
        if (!(m > 0)) return new long[] {0, 1};
        int e = Math.getExponent(m) + 1; // m = f * 2^e with f in [0.5, 1)
        double f = m / Math.scalb(1.0, e);
        long m0 = Math.round(f * (1L << 31));
        if (m0 == 1L << 31) {
            m0 >>= 1;
            e++;
        }
        long shift = 31 - e;
        if (shift > 62) return new long[] {0, 1}; // below 2^-31: every int32 accumulator requantizes to 0
        if (shift < 1) throw new PassException("quantize-realize: requantize multiplier " + m + " is too large for a fixed-point shift");
        return new long[] {m0, shift};
    }

    private static NDArray quantizeWeight(NDArray w, double[] s, SimulatedQuantize.Attributes a) {
        int n = w.elementCount();
        int inner = 1, channels = s.length;
        for (int d = Math.max(a.axis(), 0) + 1; d < w.rank(); d++) inner *= w.shape()[d];
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            double sc = channels == 1 ? s[0] : s[(i / inner) % channels];
            out[i] = (byte) Math.min(Math.max(SimulatedQuantize.round(w.getDouble(i) / sc), a.qmin()), a.qmax());
        }
        return NDArray.wrap(DType.INT8, w.shape(), out);
    }

    /** A bias on the accumulator's scale, rounded and saturated to the accumulator's range. */
    private static long toAccumulator(double v, DType acc) {
        double r = SimulatedQuantize.round(v);
        return acc.equals(DType.INT32) ? (long) Math.min(Math.max(r, Integer.MIN_VALUE), Integer.MAX_VALUE) : (long) r;
    }

    /**
     * int32, unless the largest sum the anchor can form does not fit: {@code max|x|} (the data dtype's widest level)
     * times the largest {@code sum|w|} of one output channel. 8-bit data never comes close; 16-bit data (mixed
     * precision) over a long reduction can, and then the accumulator is int64 rather than wrapping silently (and its
     * requantize multiplies in float64, see {@code requantized}).
     */
    static DType accumulator(DType data, NDArray weight) {
        long xmax = data.equals(DType.INT8) ? 128 : data.equals(DType.UINT8) ? 255 : data.equals(DType.INT16) ? 32768 : 65535;
        int channels = weight.shape()[0], per = weight.elementCount() / Math.max(channels, 1);
        long worst = 0;
        for (int c = 0; c < channels; c++) {
            long sum = 0;
            for (int i = c * per; i < (c + 1) * per; i++) sum += Math.abs((long) weight.getDouble(i));
            worst = Math.max(worst, sum);
        }
        return worst * xmax > Integer.MAX_VALUE ? DType.INT64 : DType.INT32;
    }

    private static double[] doubles(NDArray a) {
        double[] d = new double[a.elementCount()];
        for (int i = 0; i < d.length; i++) d[i] = a.getDouble(i);
        return d;
    }

    private static Expr cast(Expr x, DType to) {
        return new Call(Op.get("cast"), List.of(x), Attrs.of("dtype", AttrValue.of(to.toString())));
    }

    private static Expr clip(Expr x, SimulatedQuantize.Attributes a) {
        return new Call(Op.get("clip"), List.of(x), Attrs.of("a_min", AttrValue.of((double) a.qmin())).with("a_max", AttrValue.of((double) a.qmax())));
    }

    private static Constant scalar(double v) {
        return new Constant(NDArray.scalar((float) v));
    }

    /** A per-tensor scalar, or {@code [C, 1, ..., 1]} lined up with {@code v}'s channel axis. */
    private static Constant channelConstant(DType dtype, double[] values, QValue v) {
        return channelConstant(dtype, values, v, d -> d);
    }

    private static Constant channelConstant(DType dtype, long[] values, QValue v) {
        double[] d = new double[values.length];
        for (int i = 0; i < d.length; i++) d[i] = values[i];
        return channelConstant(dtype, d, v, x -> x);
    }

    private static Constant channelConstant(DType dtype, double[] values, QValue v, java.util.function.DoubleUnaryOperator f) {
        int[] shape;
        if (values.length == 1) {
            shape = new int[0];
        } else {
            shape = new int[v.rank() - v.axis()];
            java.util.Arrays.fill(shape, 1);
            shape[0] = values.length;
        }
        double[] d = new double[values.length];
        for (int i = 0; i < d.length; i++) d[i] = f.applyAsDouble(values[i]);
        if (dtype.equals(DType.INT64)) {
            long[] l = new long[d.length];
            for (int i = 0; i < l.length; i++) l[i] = (long) d[i];
            return new Constant(NDArray.fromLongs(dtype, shape, l));
        }
        return new Constant(NDArray.fromDoubles(dtype, shape, d));
    }
}
