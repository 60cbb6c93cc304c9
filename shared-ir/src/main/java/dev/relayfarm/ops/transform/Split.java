package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code split(data, indices_or_sections, axis=0)} returns a tuple: with an integer, that many equal
 * parts (the axis size must divide); with a list, the parts {@code [0:i0], [i0:i1], ..., [ik:]}
 * (indices non-decreasing, within the axis). {@code split(Tensor[(6, n)], 3) : (Tensor[(2, n)], x3)}.
 */
public final class Split {
    private Split() {}

    /** Exactly one of {@code sections} (> 0) and {@code indices} (non-null) is given. */
    public record SplitAttrs(long sections, List<Long> indices, long axis) {}

    public static final OpDef<SplitAttrs> DEF = new OpDef<>(
            "split", 1, Split::parse, Split::relation, OpPattern.INJECTIVE, Split::compute);

    static SplitAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("split", attrs);
        if (!r.has("indices_or_sections")) throw new RelationException("split: attribute 'indices_or_sections' is required");
        boolean sections = attrs.get("indices_or_sections").orElseThrow() instanceof AttrValue.IntValue;
        SplitAttrs a = sections
                ? new SplitAttrs(r.integer("indices_or_sections", 0), null, r.integer("axis", 0))
                : new SplitAttrs(0, Args.boxed(r.longs("indices_or_sections")), r.integer("axis", 0));
        r.finish();
        if (sections && a.sections() <= 0) throw new RelationException("split: number of sections must be positive, got " + a.sections());
        if (!sections) {
            long prev = 0;
            for (long i : a.indices()) {
                if (i < prev) throw new RelationException("split: indices " + a.indices() + " must be non-negative and non-decreasing");
                prev = i;
            }
        }
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, SplitAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("split", types, 0, "data");
        if (data == null) return false;
        int axis = Args.axis("split", a.axis(), data.rank());
        List<Type> parts = new ArrayList<>();
        for (Dim size : sizes(a, data.shape().get(axis), axis)) {
            List<Dim> shape = new ArrayList<>(data.shape());
            shape.set(axis, size);
            parts.add(new TensorType(shape, data.dtype()));
        }
        reporter.assign(types.get(1), new TupleType(parts));
        return true;
    }

    /** The size of each part along the axis. */
    private static List<Dim> sizes(SplitAttrs a, Dim d, int axis) {
        List<Dim> out = new ArrayList<>();
        if (a.indices() == null) {
            if (d.isStatic() && d.value() % a.sections() != 0) {
                throw new RelationException("split: axis " + axis + " has size " + d + ", which does not divide into " + a.sections() + " equal sections");
            }
            for (long i = 0; i < a.sections(); i++) out.add(Dims.div(d, Dim.of(a.sections())));
            return out;
        }
        long begin = 0;
        for (long i : a.indices()) {
            out.add(Dim.of(i - begin));
            begin = i;
        }
        if (d.isStatic() && begin > d.value()) {
            throw new RelationException("split: index " + begin + " is beyond axis " + axis + " of size " + d);
        }
        out.add(Dims.sub(d, Dim.of(begin)));
        return out;
    }

    private static List<NDArray> compute(List<NDArray> in, SplitAttrs a) {
        NDArray x = in.getFirst();
        int[] shape = x.shape();
        int axis = Args.axis("split", a.axis(), shape.length);
        int outer = Movement.product(shape, 0, axis);
        int inner = Movement.product(shape, axis + 1, shape.length);
        List<NDArray> out = new ArrayList<>();
        int offset = 0;
        for (Dim size : sizes(a, Dim.of(shape[axis]), axis)) {
            int len = Math.toIntExact(size.value());
            int[] s = shape.clone();
            s[axis] = len;
            NDArray part = Movement.allocate(x.dtype(), s);
            for (int o = 0; o < outer; o++) {
                Movement.copyElements(x, (o * shape[axis] + offset) * inner, part, o * len * inner, len * inner);
            }
            out.add(part);
            offset += len;
        }
        return out;
    }
}
