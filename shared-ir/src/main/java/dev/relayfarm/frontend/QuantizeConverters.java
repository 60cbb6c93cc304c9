package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import java.util.List;

/**
 * ONNX linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, composed from
 * element-wise ops. Scale and zero point are a scalar (per tensor), a 1-D tensor along {@code axis}
 * (per axis) or, with {@code block_size}, a tensor of the input's rank whose {@code axis} dim counts
 * blocks (each scale repeats {@code block_size} times). Arithmetic runs in float32 (float64 when the
 * scale is double); integer results (int2..int64, uint2..uint64) round half to even and saturate to
 * the target's range (int4 −8..7, uint4 0..15, int2 −2..1, uint2 0..3). An 8-bit float target is
 * {@code x / scale + zero_point} cast once to it, saturating unless {@code saturate=0}; float4e2m1
 * always saturates (it has no infinity or NaN).
 */
final class QuantizeConverters {
    private QuantizeConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("QuantizeLinear", QuantizeConverters::quantize);
        b.add("DequantizeLinear", QuantizeConverters::dequantize);
        b.add("DynamicQuantizeLinear", QuantizeConverters::dynamicQuantize);
        b.add(OnnxImporter.OUR_DOMAIN + "." + OnnxImporter.QUANTIZE_POINT, QuantizeConverters::simulatedQuantize);
    }

    /**
     * {@code quantize.qdq.QdqPairs}'s node for a Q → DQ pair: the quantize point with the pair's scale, signed or not as the pair's
     * range (only our rewrite of a QDQ model makes it).
     */
    private static List<Expr> simulatedQuantize(OnnxNode n) {
        NDArray s = n.requireConstant(1, "the pair's scale");
        if (s.elementCount() != 1 || !(s.getDouble(0) > 0)) throw n.unsupported("a quantize point needs one positive scale, got " + s.elementCount() + " values");
        boolean signed = n.attrInt("signed", 1) != 0;
        dev.relayfarm.ir.Attrs attrs = dev.relayfarm.ir.Attrs.of("kind", dev.relayfarm.ir.AttrValue.of("activation"));
        if (!signed) attrs = attrs.with("sign", dev.relayfarm.ir.AttrValue.of(false));
        Expr x = MathConverters.cast(n, n.input(0), DType.FLOAT32);
        return List.of(new dev.relayfarm.ir.Call(dev.relayfarm.ir.Op.get(SimulatedQuantize.NAME),
                List.of(x, OnnxNode.constant(NDArray.scalar((float) s.getDouble(0)))), attrs));
    }

    private static DType compute(DType scale) {
        return scale.equals(DType.FLOAT64) ? DType.FLOAT64 : DType.FLOAT32;
    }

    /** {@code p} (scale or zero point) reshaped/repeated to broadcast against input 0. */
    private static Expr align(OnnxNode n, Expr p, long axisAttr, long blockSize) {
        TensorType x = n.inputType(0);
        TensorType pt = (TensorType) n.typeOf(p);
        int rank = x.rank();
        if (pt.rank() == 0 || (pt.rank() == 1 && pt.shape().getFirst().isStatic() && pt.shape().getFirst().value() == 1 && blockSize == 0)) {
            return p;
        }
        int axis = (int) (axisAttr < 0 ? axisAttr + rank : axisAttr);
        if (axis < 0 || axis >= rank) throw n.unsupported("axis " + axisAttr + " is out of range for rank " + rank);
        if (blockSize <= 0) {
            if (pt.rank() != 1) throw n.unsupported("a per-axis scale must be 1-D, got " + pt);
            long[] shape = new long[rank - axis];
            java.util.Arrays.fill(shape, 1);
            shape[0] = -1;
            return n.call("reshape", List.of(p), "newshape", shape);
        }
        if (pt.rank() != rank) throw n.unsupported("a blocked scale must have the input's rank " + rank + ", got " + pt);
        Dim d = x.shape().get(axis);
        if (!d.isStatic()) throw n.unsupported("blocked quantization needs a static dim " + axis + ", got " + x);
        // Repeat each block's parameter block_size times along the axis: take with i / block_size.
        long[] idx = new long[Math.toIntExact(d.value())];
        for (int i = 0; i < idx.length; i++) idx[i] = i / blockSize;
        Expr indices = OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {idx.length}, idx));
        return n.call("take", List.of(p, indices), "axis", (long) axis, "mode", "fast");
    }

    private static double[] range(OnnxNode n, DType q) {
        if (!q.isInteger()) throw n.unsupported("quantizing to " + q + " is not supported (integer, 8-bit float and float4e2m1 targets only)");
        if (q.code() == DType.Code.UINT) return new double[] {0, Math.pow(2, q.bits()) - 1};
        return new double[] {-Math.pow(2, q.bits() - 1), Math.pow(2, q.bits() - 1) - 1};
    }

    private static List<Expr> quantize(OnnxNode n) {
        long axis = n.attrInt("axis", 1), blockSize = n.opset() >= 21 ? n.attrInt("block_size", 0) : 0;
        boolean saturate = n.attrInt("saturate", 1) != 0; // only affects float8 targets
        DType scaleType = n.inputType(1).dtype();
        DType precision = n.hasAttr("precision") && n.attrInt("precision", 0) != 0
                ? OnnxDTypes.require((int) n.attrInt("precision", 0), n.where() + ": attribute 'precision'") : scaleType;
        DType ct = compute(precision);
        DType q;
        if (n.hasInput(2)) q = n.inputType(2).dtype();
        else if (n.attrInt("output_dtype", 0) != 0) q = OnnxDTypes.require((int) n.attrInt("output_dtype", 0), n.where() + ": attribute 'output_dtype'");
        else q = DType.UINT8;
        Expr x = MathConverters.cast(n, n.input(0), ct);
        Expr scale = align(n, MathConverters.cast(n, n.input(1), ct), axis, blockSize);
        if (q.isMiniFloat()) {
            if (q.code() == DType.Code.FLOAT8_E8M0FNU) throw n.unsupported("quantizing to " + q + " is not supported");
            Expr y = n.call("divide", x, scale);
            if (n.hasInput(2)) y = n.call("add", y, align(n, MathConverters.cast(n, n.input(2), ct), axis, blockSize));
            return List.of(saturate && q.bits() == 8 ? n.call("cast", List.of(y), "dtype", q.toString(), "saturate", true) : MathConverters.cast(n, y, q));
        }
        double[] r = range(n, q);
        Expr y = MathConverters.roundHalfEven(n, n.call("divide", x, scale));
        if (n.hasInput(2)) y = n.call("add", y, align(n, MathConverters.cast(n, n.input(2), ct), axis, blockSize));
        y = n.call("clip", List.of(y), "a_min", r[0], "a_max", r[1]);
        return List.of(MathConverters.cast(n, y, q));
    }

    private static List<Expr> dequantize(OnnxNode n) {
        long axis = n.attrInt("axis", 1), blockSize = n.opset() >= 21 ? n.attrInt("block_size", 0) : 0;
        DType scaleType = n.inputType(1).dtype();
        DType out = n.attrInt("output_dtype", 0) != 0
                ? OnnxDTypes.require((int) n.attrInt("output_dtype", 0), n.where() + ": attribute 'output_dtype'") : scaleType;
        DType ct = compute(scaleType);
        Expr x = MathConverters.cast(n, n.input(0), ct);
        if (n.hasInput(2)) x = n.call("subtract", x, align(n, MathConverters.cast(n, n.input(2), ct), axis, blockSize));
        Expr y = n.call("multiply", x, align(n, MathConverters.cast(n, n.input(1), ct), axis, blockSize));
        return List.of(ct.equals(out) ? y : MathConverters.cast(n, y, out));
    }

    /**
     * DynamicQuantizeLinear: uint8 quantization whose range [min(0, min x), max(0, max x)] comes from
     * the data: scale = range / 255, zero point = saturate(round(-min / scale)).
     */
    private static List<Expr> dynamicQuantize(OnnxNode n) {
        Expr x = n.input(0);
        TensorType t = n.inputType(0);
        if (!t.dtype().equals(DType.FLOAT32)) throw n.unsupported("input must be float32, got " + t.dtype());
        Expr zero = MathConverters.scalar(n, x, 0);
        Expr lo = n.call("minimum", n.call("min", List.of(x), "axis", null, "keepdims", false), zero);
        Expr hi = n.call("maximum", n.call("max", List.of(x), "axis", null, "keepdims", false), zero);
        Expr scale = n.call("divide", n.call("subtract", hi, lo), MathConverters.scalar(n, x, 255));
        Expr zp = n.call("clip", List.of(MathConverters.roundHalfEven(n, n.call("divide", n.call("negative", lo), scale))),
                "a_min", 0.0, "a_max", 255.0);
        Expr y = n.call("add", MathConverters.roundHalfEven(n, n.call("divide", x, scale)), zp);
        y = n.call("clip", List.of(y), "a_min", 0.0, "a_max", 255.0);
        return List.of(MathConverters.cast(n, y, DType.UINT8), scale, MathConverters.cast(n, zp, DType.UINT8));
    }
}
