package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.CastAttrs;
import dev.relayfarm.ops.ClipAttrs;
import dev.relayfarm.ops.nn.BiasAdd;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Finds what of realized quantized Relay the accelerator can run, starting from an anchor and following single
 * users forward:
 *
 * <pre>
 * nn.conv2d | nn.dense (int8/uint8 data, int8 constant weight, out_dtype="int32")
 *   [nn.bias_add | add (int32 constant per channel or scalar)]* [nn.relu]*
 *   [cast(int64) multiply(m0) add(2^(sh-1)) right_shift(sh) clip(qmin, qmax) cast(int8|uint8) [nn.relu | clip]*]
 * </pre>
 *
 * The requantize is taken whole or not at all (not when {@link FixedPointPlan} cannot do it exactly); the region ends
 * where the pattern stops, as int32 when no requantize was taken. Conv2d must be NCHW / OIHW, batch 1, groups 1,
 * dilation 1; dense 2-D.
 */
final class LayerMatcher {
    /** A matched region: its layer, the region's last node and its node count (the anchor is {@code length - 1} calls below). */
    record Match(QuantizedLayer layer, Expr output, int length) {
    }

    private final Function<Expr, Type> types;
    private final Map<Expr, List<Expr>> users;

    /** {@code users}: every node's parents (a function's result counts as a parent too, so it ends a region). */
    LayerMatcher(Function<Expr, Type> types, Map<Expr, List<Expr>> users) {
        this.types = types;
        this.users = users;
    }

    Optional<Match> match(Call anchor, String name) {
        if (!(anchor.callee() instanceof Op op) || anchor.args().size() != 2 || !(anchor.args().get(1) instanceof Constant w)
                || !w.data().dtype().equals(DType.INT8)) return Optional.empty();
        if (!(types.apply(anchor.args().get(0)) instanceof TensorType in) || !(in.dtype().equals(DType.INT8) || in.dtype().equals(DType.UINT8))) {
            return Optional.empty();
        }
        if (!(types.apply(anchor) instanceof TensorType out) || !out.dtype().equals(DType.INT32)) return Optional.empty();
        int[] inShape = dims(in), wShape = w.data().shape();
        ConvGeometry geometry;
        boolean dense;
        switch (op.name()) {
            case "nn.conv2d" -> {
                Conv2D.Conv2DAttrs a = (Conv2D.Conv2DAttrs) OpRegistry.get(op.name()).parseAttrs(anchor.attrs());
                if (inShape == null || inShape.length != 4 || inShape[0] != 1 || a.groups() != 1 || a.dilation()[0] != 1 || a.dilation()[1] != 1
                        || !a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("OIHW") || wShape.length != 4) {
                    return Optional.empty();
                }
                int[] p = a.padding();
                geometry = new ConvGeometry(inShape[1], inShape[2], inShape[3], wShape[0], wShape[2], wShape[3], a.strides()[0], a.strides()[1],
                        p[0], p[1], p[2], p[3]);
                dense = false;
            }
            case "nn.dense" -> {
                if (inShape == null || inShape.length != 2 || wShape.length != 2) return Optional.empty();
                geometry = ConvGeometry.dense(inShape[0], inShape[1], wShape[0]);
                dense = true;
            }
            default -> {
                return Optional.empty();
            }
        }
        int channels = geometry.channelsOut(), rank = dense ? 2 : 4;
        List<EpilogueOp> ops = new ArrayList<>();
        Expr cur = anchor;
        int length = 1;
        DType dtype = DType.INT32;
        while (true) {
            Call u = soleUser(cur);
            if (u == null) break;
            String n = opName(u);
            if (dtype.equals(DType.INT32) && (n.equals("nn.bias_add") || n.equals("add")) && u.args().size() == 2 && u.args().get(0) == cur
                    && u.args().get(1) instanceof Constant b && b.data().dtype().equals(DType.INT32)) {
                long[] v = n.equals("add") ? channelValues(b.data(), channels, rank) : biasAddValues(u, b.data(), channels, rank);
                if (v == null) break;
                ops.add(new EpilogueOp.BiasAdd(toInts(v)));
            } else if (n.equals("nn.relu")) {
                ops.add(new EpilogueOp.Relu());
            } else if (!dtype.equals(DType.INT32) && n.equals("clip")) {
                ClipAttrs c = ClipAttrs.parse(u.attrs());
                ops.add(new EpilogueOp.Clip((int) Math.ceil(c.aMin()), (int) Math.floor(c.aMax())));
            } else if (dtype.equals(DType.INT32) && n.equals("cast") && castTo(u).equals(DType.INT64)) {
                Requantized r = requantize(u, channels, rank);
                if (r == null || !hasPlan(r.op)) break;
                ops.add(r.op);
                ops.add(new EpilogueOp.Clip(r.op.qmin(), r.op.qmax()));
                dtype = r.dtype;
                length += 5;
                u = r.end;
            } else {
                break;
            }
            cur = u;
            length++;
        }
        try {
            QuantizedLayer layer = new QuantizedLayer(name, geometry, dense, w.data().byteData(), in.dtype(), ops, dtype);
            return Optional.of(new Match(layer, cur, length));
        } catch (IllegalArgumentException e) {
            // e.g. a -128 weight under a uint8 input: the layer stays on the CPU
            return Optional.empty();
        }
    }

    /** Whether the ALU can do this requantize exactly; when not, the region ends at the int32 accumulator instead. */
    private static boolean hasPlan(EpilogueOp.Requantize r) {
        try {
            FixedPointPlan.of(r);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private record Requantized(EpilogueOp.Requantize op, Call end, DType dtype) {
    }

    /** cast(int64) → multiply(m0) → add(half) → right_shift(sh) → clip → cast(int8|uint8), each the sole user. */
    private Requantized requantize(Call cast64, int channels, int rank) {
        Call mul = soleUser(cast64), add = soleUser(mul), shr = soleUser(add), clip = soleUser(shr), cast8 = soleUser(clip);
        if (cast8 == null || !opName(mul).equals("multiply") || !opName(add).equals("add") || !opName(shr).equals("right_shift")
                || !opName(clip).equals("clip") || !opName(cast8).equals("cast")) return null;
        long[] m0 = constantArg(mul, cast64, channels, rank), half = constantArg(add, mul, channels, rank), sh = constantArg(shr, add, channels, rank);
        if (m0 == null || half == null || sh == null) return null;
        for (int c = 0; c < channels; c++) {
            if (sh[c] < 1 || sh[c] > 62 || half[c] != 1L << (sh[c] - 1) || m0[c] < 0 || m0[c] >= 1L << 31) return null;
        }
        DType to = castTo(cast8);
        if (!to.equals(DType.INT8) && !to.equals(DType.UINT8)) return null;
        ClipAttrs c = ClipAttrs.parse(clip.attrs());
        int lo = (int) Math.ceil(c.aMin()), hi = (int) Math.floor(c.aMax());
        // the store keeps an accumulator's low 8 bits: the clip range must lie inside the narrow type for that byte to
        // read back as the clipped value (and FixedPointPlan saturates early at these bounds)
        if (lo < (to.equals(DType.INT8) ? -128 : 0) || hi > (to.equals(DType.INT8) ? 127 : 255) || lo > hi) return null;
        return new Requantized(new EpilogueOp.Requantize(m0, sh, lo, hi), cast8, to);
    }

    private long[] constantArg(Call call, Expr from, int channels, int rank) {
        if (call.args().size() != 2 || call.args().get(0) != from || !(call.args().get(1) instanceof Constant k)
                || !k.data().dtype().equals(DType.INT64)) return null;
        return channelValues(k.data(), channels, rank);
    }

    private static long[] biasAddValues(Call biasAdd, NDArray b, int channels, int rank) {
        BiasAdd.BiasAddAttrs a = (BiasAdd.BiasAddAttrs) OpRegistry.get("nn.bias_add").parseAttrs(biasAdd.attrs());
        int axis = a.axis() < 0 ? a.axis() + rank : a.axis();
        if (axis != 1 || b.rank() != 1 || b.elementCount() != channels) return null;
        long[] v = new long[channels];
        for (int i = 0; i < channels; i++) v[i] = b.getLong(i);
        return v;
    }

    /**
     * A constant broadcast against an output whose channel axis is 1 (NCHW, or a dense layer's [N, M]): a scalar, or
     * a tensor whose only non-1 dim lines up with axis 1 and has one value per channel; null otherwise.
     */
    static long[] channelValues(NDArray k, int channels, int rank) {
        long[] v = new long[channels];
        if (k.elementCount() == 1) {
            java.util.Arrays.fill(v, k.getLong(0));
            return v;
        }
        int[] s = k.shape();
        if (s.length > rank) return null;
        for (int d = 0; d < s.length; d++) {
            if (s[d] != 1 && (d + rank - s.length != 1 || s[d] != channels)) return null;
        }
        for (int i = 0; i < channels; i++) v[i] = k.getLong(i);
        return v;
    }

    private Call soleUser(Expr e) {
        if (e == null) return null;
        List<Expr> u = users.get(e);
        return u != null && u.size() == 1 && u.get(0) instanceof Call c ? c : null;
    }

    private static String opName(Call c) {
        return c != null && c.callee() instanceof Op op ? op.name() : "";
    }

    private static DType castTo(Call cast) {
        return ((CastAttrs) OpRegistry.get("cast").parseAttrs(cast.attrs())).dtype();
    }

    private static int[] dims(TensorType t) {
        int[] d = new int[t.shape().size()];
        for (int i = 0; i < d.length; i++) {
            if (!(t.shape().get(i) instanceof Dim.Int(long v))) return null;
            d[i] = (int) v;
        }
        return d;
    }

    private static int[] toInts(long[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) out[i] = (int) v[i];
        return out;
    }
}
