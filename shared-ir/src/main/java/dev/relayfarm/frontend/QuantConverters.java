package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX quantized linear algebra, composed from Relay casts and arithmetic: QLinearMatMul,
 * MatMulInteger, ConvInteger, QLinearConv. (QuantizeLinear and friends are in QuantizeConverters.)
 *
 * <p>Integer products are computed in float64, which is exact for the 8/16-bit operands these
 * operators take (a K-term sum of 16-bit products stays far below 2^53); the requantization then
 * rounds half to even, as ONNX specifies (numpy's rint), not half away from zero as Relay's
 * {@code round} does. Saturation clips to the target type's range before the final cast.
 */
final class QuantConverters {
    private QuantConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("MatMulInteger", QuantConverters::matMulInteger);
        b.add("QLinearMatMul", QuantConverters::qlinearMatMul);
        b.add("ConvInteger", QuantConverters::convInteger);
        b.add("QLinearConv", QuantConverters::qlinearConv);
    }

    // ---- integer matmul / conv ----

    private static List<Expr> matMulInteger(OnnxNode n) {
        Expr a = centered(n, 0, n.hasInput(2) ? n.input(2) : null, true);
        Expr b = centered(n, 1, n.hasInput(3) ? n.input(3) : null, false);
        return List.of(cast(n, matmul(n, a, b), DType.INT32));
    }

    /** y = saturate(rint((a - a_zp) · (b - b_zp) · (a_scale · b_scale / y_scale)) + y_zp). */
    private static List<Expr> qlinearMatMul(OnnxNode n) {
        Expr a = centered(n, 0, n.input(2), true);
        Expr b = centered(n, 3, n.input(5), false);
        Expr acc = matmul(n, a, b);
        Expr aScale = rowParam(n, n.input(1), n.inputType(0));
        Expr factor = n.call("divide", n.call("multiply", aScale, n.input(4)), n.input(6));
        return List.of(requantize(n, acc, factor, n.input(7)));
    }

    private static List<Expr> convInteger(OnnxNode n) {
        Expr x = centered(n, 0, n.hasInput(2) ? n.input(2) : null, false);
        Expr w = centered(n, 1, n.hasInput(3) ? n.input(3) : null, true);
        return List.of(cast(n, conv(n, x, w, n.inputType(1)), DType.INT32));
    }

    private static List<Expr> qlinearConv(OnnxNode n) {
        Expr x = centered(n, 0, n.input(2), false);
        Expr w = centered(n, 3, n.input(5), true);
        Expr acc = conv(n, x, w, n.inputType(3));
        if (n.hasInput(8)) {
            Expr bias = n.call("reshape", List.of(cast(n, n.input(8), DType.FLOAT64)), "newshape", new long[] {-1, 1, 1});
            acc = n.call("add", acc, bias);
        }
        // A per-output-channel weight scale is [M]; it scales axis 1 of the NCHW result.
        Expr wScale = n.input(4);
        if (n.inputType(4).rank() == 1) wScale = n.call("reshape", List.of(wScale), "newshape", new long[] {-1, 1, 1});
        Expr factor = n.call("divide", n.call("multiply", n.input(1), wScale), n.input(6));
        return List.of(requantize(n, acc, factor, n.input(7)));
    }

    /**
     * Input {@code i} minus its zero point, in float64. A 1-D zero point of the left matmul operand
     * (or of a conv weight) is per row / per output channel, so it is reshaped to broadcast there.
     */
    private static Expr centered(OnnxNode n, int i, Expr zp, boolean perRow) {
        Expr x = cast(n, n.input(i), DType.FLOAT64);
        if (zp == null) return x;
        return n.call("subtract", x, cast(n, perRow ? rowParam(n, zp, n.inputType(i)) : zp, DType.FLOAT64));
    }

    /** A 1-D parameter of a rank-r operand applied along axis r-2 (matmul rows) or axis 0 (conv weights). */
    private static Expr rowParam(OnnxNode n, Expr p, TensorType of) {
        TensorType pt = (TensorType) n.typeOf(p);
        if (pt.rank() != 1 || pt.shape().getFirst().equals(Dim.of(1))) return p;
        long[] shape = new long[of.rank() == 4 ? 4 : 2];
        java.util.Arrays.fill(shape, 1);
        shape[0] = -1;
        return n.call("reshape", List.of(p), "newshape", shape);
    }

    private static Expr requantize(OnnxNode n, Expr acc, Expr factor, Expr yZp) {
        Expr y = roundHalfEven(n, n.call("multiply", acc, cast(n, factor, DType.FLOAT64)));
        y = n.call("add", y, cast(n, yZp, DType.FLOAT64));
        return saturate(n, y, n.inputType(7).dtype());
    }

    private static Expr conv(OnnxNode n, Expr x, Expr w, TensorType wt) {
        if (n.inputRank(0) != 4 || wt.rank() != 4) throw n.unsupported("only 2-D (NCHW) integer convolution is supported");
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) kernel = new long[] {wt.shape().get(2).value(), wt.shape().get(3).value()};
        long[] strides = pair(n, "strides");
        long[] dilations = pair(n, "dilations");
        long[] pads = n.attrInts("pads");
        String autoPad = n.attrString("auto_pad", "NOTSET");
        if (!autoPad.equals("NOTSET") && !autoPad.equals("VALID")) throw n.unsupported("auto_pad=" + autoPad + " is not supported");
        if (pads == null || autoPad.equals("VALID")) pads = new long[4];
        return n.call("nn.conv2d", List.of(x, w), "strides", strides, "padding", pads, "dilation", dilations,
                "groups", n.attrInt("group", 1), "channels", wt.shape().get(0).value(), "kernel_size", kernel);
    }

    private static long[] pair(OnnxNode n, String name) {
        long[] v = n.attrInts(name);
        if (v == null) return new long[] {1, 1};
        if (v.length != 2) throw n.unsupported("attribute '" + name + "' has " + v.length + " values (only 2-D is supported)");
        return v;
    }

    /** numpy matmul for operands of rank >= 2 whose batch dims broadcast (static shapes). */
    static Expr matmul(OnnxNode n, Expr a, Expr b) {
        TensorType ta = (TensorType) n.typeOf(a);
        TensorType tb = (TensorType) n.typeOf(b);
        if (ta.rank() == 2 && tb.rank() == 2) return n.call("nn.matmul", a, b);
        if (ta.rank() < 2 || tb.rank() < 2 || !ta.isStatic() || !tb.isStatic()) {
            throw n.unsupported("matmul of " + ta + " and " + tb + " is not supported (rank >= 2, static shapes)");
        }
        List<Dim> batch = NnConverters.broadcastDims(n, ta.shape().subList(0, ta.rank() - 2), tb.shape().subList(0, tb.rank() - 2));
        long bsz = batch.stream().mapToLong(Dim::value).reduce(1, (x, y) -> x * y);
        int[] sa = ta.staticShape(), sb = tb.staticShape();
        long m = sa[sa.length - 2], k = sa[sa.length - 1], nn = sb[sb.length - 1];
        Expr a3 = n.call("reshape", List.of(broadcastBatch(n, a, batch, m, k)), "newshape", new long[] {bsz, m, k});
        Expr b3 = n.call("reshape", List.of(broadcastBatch(n, b, batch, k, nn)), "newshape", new long[] {bsz, k, nn});
        Expr y = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", false, "transpose_b", false);
        List<Long> out = new ArrayList<>(batch.stream().map(Dim::value).toList());
        out.add(m);
        out.add(nn);
        return n.call("reshape", List.of(y), "newshape", out.stream().mapToLong(Long::longValue).toArray());
    }

    private static Expr broadcastBatch(OnnxNode n, Expr x, List<Dim> batch, long rows, long cols) {
        long[] target = new long[batch.size() + 2];
        for (int i = 0; i < batch.size(); i++) target[i] = batch.get(i).value();
        target[batch.size()] = rows;
        target[batch.size() + 1] = cols;
        TensorType t = (TensorType) n.typeOf(x);
        if (java.util.Arrays.equals(java.util.Arrays.stream(t.staticShape()).asLongStream().toArray(), target)) return x;
        return n.call("broadcast_to", List.of(x), "shape", target);
    }

    // ---- shared helpers ----

    static Expr cast(OnnxNode n, Expr e, DType to) {
        if (((TensorType) n.typeOf(e)).dtype().equals(to)) return e;
        return n.call("cast", List.of(e), "dtype", to.toString());
    }

    static Expr scalar(DType t, double v) {
        return OnnxNode.constant(NDArray.fromDoubles(t, new int[0], new double[] {v}));
    }

    /** Clips a floating-point tensor to {@code to}'s range and casts it (ONNX saturation). */
    static Expr saturate(OnnxNode n, Expr e, DType to) {
        double lo, hi;
        if (to.code() == DType.Code.UINT) {
            lo = 0;
            hi = Math.pow(2, to.bits()) - 1;
        } else {
            lo = -Math.pow(2, to.bits() - 1);
            hi = Math.pow(2, to.bits() - 1) - 1;
        }
        return cast(n, n.call("clip", List.of(e), "a_min", lo, "a_max", hi), to);
    }

    /**
     * Rounds half to even (numpy's rint), which ONNX quantization specifies; Relay's {@code round}
     * rounds half away from zero. With f = floor(x) and d = x - f: f + 1 when d > 0.5, or d = 0.5 and
     * f is odd; else f.
     */
    static Expr roundHalfEven(OnnxNode n, Expr x) {
        DType t = ((TensorType) n.typeOf(x)).dtype();
        Expr f = n.call("floor", x);
        Expr d = n.call("subtract", x, f);
        Expr odd = n.call("equal", n.call("floor_mod", f, scalar(t, 2)), scalar(t, 1));
        Expr up = n.call("logical_or", n.call("greater", d, scalar(t, 0.5)),
                n.call("logical_and", n.call("equal", d, scalar(t, 0.5)), odd));
        return n.call("where", up, n.call("add", f, scalar(t, 1)), f);
    }
}
