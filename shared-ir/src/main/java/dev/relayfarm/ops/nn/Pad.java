package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nn.pad(data, pad_value, pad_width=[[before, after], ..], pad_mode="constant")}: TVM's current
 * signature, where the fill value is a scalar input. Modes: {@code constant} (pad_value),
 * {@code edge} (repeat the border element) and {@code reflect} (mirror without repeating the border,
 * numpy's "reflect") and {@code wrap} (continue periodically from the opposite border, numpy's
 * "wrap", ONNX Pad's mode "wrap").
 */
public final class Pad {
    public static final String NAME = "nn.pad";

    private Pad() {}

    public enum Mode { CONSTANT, EDGE, REFLECT, WRAP }

    /** {@code padWidth[axis] = {before, after}}. */
    public record PadAttrs(int[][] padWidth, Mode mode) {}

    public static OpDef<PadAttrs> def() {
        return new OpDef<>(NAME, 2, Pad::parse, Pad::relation, OpPattern.INJECTIVE, Pad::compute);
    }

    static PadAttrs parse(Attrs attrs) {
        // pad_width is a list of lists, which AttrReader does not read; the reader checks everything else.
        AttrReader r = new AttrReader(NAME, attrs.without("pad_width"));
        String mode = r.string("pad_mode", "constant");
        r.finish();
        AttrValue pw = attrs.get("pad_width").orElseThrow(() -> new RelationException(NAME + ": attribute 'pad_width' is required"));
        if (!(pw instanceof AttrValue.ListValue rows)) throw badWidth(pw);
        int[][] width = new int[rows.values().size()][];
        for (int i = 0; i < width.length; i++) {
            if (!(rows.values().get(i) instanceof AttrValue.ListValue pair) || pair.values().size() != 2) throw badWidth(pw);
            width[i] = new int[2];
            for (int j = 0; j < 2; j++) {
                if (!(pair.values().get(j) instanceof AttrValue.IntValue(long v))) throw badWidth(pw);
                if (v < 0) throw new RelationException(NAME + ": pad_width must be non-negative, got " + v + " on axis " + i);
                width[i][j] = Math.toIntExact(v);
            }
        }
        Mode m = switch (mode) {
            case "constant" -> Mode.CONSTANT;
            case "edge" -> Mode.EDGE;
            case "reflect" -> Mode.REFLECT;
            case "wrap" -> Mode.WRAP;
            default -> throw new RelationException(NAME + ": pad_mode must be \"constant\", \"edge\", \"reflect\" or \"wrap\", got \"" + mode + "\"");
        };
        return new PadAttrs(width, m);
    }

    private static RelationException badWidth(AttrValue v) {
        return new RelationException(NAME + ": attribute 'pad_width' must be a list of [before, after] integer pairs, got " + v);
    }

    static boolean relation(List<Type> types, int numInputs, PadAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        TensorType value = Rel.tensor(NAME, "pad_value", types.get(1));
        if (value != null && !value.isScalar()) throw new RelationException(NAME + ": pad_value must be a scalar, got " + value);
        if (a.padWidth().length != data.rank()) {
            throw new RelationException(NAME + ": pad_width has " + a.padWidth().length + " entries but data " + data + " has rank " + data.rank());
        }
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < data.rank(); i++) {
            Dim d = data.shape().get(i);
            int before = a.padWidth()[i][0], after = a.padWidth()[i][1];
            if (a.mode() == Mode.REFLECT && d instanceof Dim.Int(long n) && (before >= n || after >= n) && before + after > 0) {
                throw new RelationException(NAME + ": reflect padding " + java.util.Arrays.toString(a.padWidth()[i]) + " on axis " + i
                        + " must be smaller than the dimension " + n);
            }
            if ((a.mode() == Mode.EDGE || a.mode() == Mode.WRAP) && d instanceof Dim.Int(long n) && n == 0 && before + after > 0) {
                throw new RelationException(NAME + ": " + a.mode().name().toLowerCase(java.util.Locale.ROOT) + " padding needs a non-empty axis " + i);
            }
            out.add(Dims.add(d, Dim.of(before + after)));
        }
        reporter.assign(types.get(2), new TensorType(out, data.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, PadAttrs a) {
        NDArray x = inputs.get(0);
        int rank = x.rank();
        if (a.padWidth().length != rank) throw new IllegalArgumentException(NAME + ": pad_width does not match rank " + rank);
        int[] shape = x.shape(), outShape = new int[rank];
        // For each axis, the source coordinate of each output coordinate (-1: the fill value).
        int[][] src = new int[rank][];
        for (int d = 0; d < rank; d++) {
            int n = shape[d], before = a.padWidth()[d][0];
            outShape[d] = n + before + a.padWidth()[d][1];
            src[d] = new int[outShape[d]];
            for (int i = 0; i < outShape[d]; i++) src[d][i] = (int) source(a.mode(), i - before, n);
        }
        NDArray out = NDArray.zeros(x.dtype(), outShape);
        int total = out.size();
        int[] idx = new int[rank];
        NDArray fill = inputs.get(1);
        boolean real = x.dtype().isFloat();
        double fd = fill.getDouble(0);
        long fl = real ? 0 : fill.getLong(0);
        int[] stride = new int[rank];
        for (int d = rank - 1, s = 1; d >= 0; d--) {
            stride[d] = s;
            s *= shape[d];
        }
        boolean f32 = Arrays2.isF32(x);
        float[] fin = f32 ? x.floatData() : null, fout = f32 ? out.floatData() : null;
        for (int i = 0; i < total; i++) {
            int off = 0;
            boolean pad = false;
            for (int d = 0; d < rank; d++) {
                int s = src[d][idx[d]];
                if (s < 0) {
                    pad = true;
                    break;
                }
                off += s * stride[d];
            }
            if (f32) fout[i] = pad ? (float) fd : fin[off];
            else if (real) out.setDouble(i, pad ? fd : x.getDouble(off));
            else out.setLong(i, pad ? fl : x.getLong(off));
            for (int d = rank - 1; d >= 0; d--) {
                if (++idx[d] < outShape[d]) break;
                idx[d] = 0;
            }
        }
        return List.of(out);
    }

    /**
     * The input position that position {@code j} of a padded axis of length {@code n} reads: edge repeats the border,
     * reflect mirrors without repeating it (numpy's), wrap goes around (more than once for pads wider than the axis, as
     * numpy's "wrap" does); -1 for constant padding outside the input.
     */
    public static long source(Mode mode, long j, long n) {
        if (j >= 0 && j < n) return j;
        return switch (mode) {
            case CONSTANT -> -1;
            case EDGE -> j < 0 ? 0 : n - 1;
            case REFLECT -> {
                if (n == 1) yield 0;
                long period = 2 * (n - 1);
                long m = Math.floorMod(j, period);
                yield m < n ? m : period - m;
            }
            case WRAP -> Math.floorMod(j, n);
        };
    }
}
