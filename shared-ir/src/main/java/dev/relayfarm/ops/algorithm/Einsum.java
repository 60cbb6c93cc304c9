package dev.relayfarm.ops.algorithm;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code einsum(tensors, equation)} (TVM's EinsumAttrs): Einstein summation over a tuple of tensors
 * with numpy's equation language: {@code "ij,jk->ik"}, repeated labels within one operand take a
 * diagonal ({@code "ii->i"}), {@code "..."} stands for broadcast leading dims, and without
 * {@code "->"} the output is the ellipsis dims followed by the labels used exactly once, in
 * alphabetical order. Every operand has the same dtype, which is the result's. A reference kernel:
 * it iterates over the output and summed label spaces directly (no contraction planning).
 */
public final class Einsum {
    private Einsum() {}

    public record EinsumAttrs(String equation) {}

    public static final OpDef<EinsumAttrs> DEF = new OpDef<>("einsum", 1, Einsum::parse, Einsum::relation, OpPattern.OPAQUE, Einsum::compute);

    static EinsumAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("einsum", attrs);
        if (!r.has("equation")) throw new RelationException("einsum: attribute 'equation' is required");
        EinsumAttrs a = new EinsumAttrs(r.string("equation", ""));
        r.finish();
        return a;
    }

    /**
     * A parsed equation bound to operand ranks: each operand's axes as label ids, the output's label
     * ids; ids {@code 0 .. ellipsisDims-1} are the ellipsis dims (right-aligned across operands).
     */
    public record Plan(List<int[]> operands, int[] output, int labelCount, int ellipsisDims) {}

    public static Plan plan(String equation, int[] ranks) {
        String eq = equation.replace(" ", "");
        int arrow = eq.indexOf("->");
        String lhs = arrow < 0 ? eq : eq.substring(0, arrow);
        String[] terms = lhs.split(",", -1);
        if (terms.length != ranks.length) {
            throw new RelationException("einsum: equation '" + equation + "' has " + terms.length + " operands but " + ranks.length + " tensors were given");
        }
        int ellipsis = 0;
        for (int t = 0; t < terms.length; t++) {
            int letters = letters(equation, terms[t]).length;
            if (terms[t].contains("...")) {
                if (ranks[t] < letters) throw new RelationException("einsum: operand " + t + " has rank " + ranks[t] + ", fewer than the labels of '" + terms[t] + "'");
                ellipsis = Math.max(ellipsis, ranks[t] - letters);
            } else if (ranks[t] != letters) {
                throw new RelationException("einsum: operand " + t + " has rank " + ranks[t] + " but '" + terms[t] + "' names " + letters + " axes");
            }
        }
        final int ellipsisDims = ellipsis;
        Map<Character, Integer> ids = new LinkedHashMap<>();
        Map<Character, Integer> uses = new LinkedHashMap<>();
        List<int[]> operands = new ArrayList<>();
        for (int t = 0; t < terms.length; t++) {
            String term = terms[t];
            int own = term.contains("...") ? ranks[t] - letters(equation, term).length : 0;
            int[] axes = new int[ranks[t]];
            int pos = 0;
            for (int i = 0; i < term.length(); i++) {
                char c = term.charAt(i);
                if (c == '.') {
                    for (int e = 0; e < own; e++) axes[pos++] = ellipsis - own + e;
                    i += 2;
                    continue;
                }
                ids.computeIfAbsent(c, x -> ellipsisDims + ids.size());
                uses.merge(c, 1, Integer::sum);
                axes[pos++] = ids.get(c);
            }
            operands.add(axes);
        }
        List<Integer> out = new ArrayList<>();
        if (arrow < 0) {
            for (int e = 0; e < ellipsis; e++) out.add(e);
            uses.entrySet().stream().filter(u -> u.getValue() == 1).map(Map.Entry::getKey).sorted().forEach(c -> out.add(ids.get(c)));
        } else {
            String rhs = eq.substring(arrow + 2);
            for (int i = 0; i < rhs.length(); i++) {
                char c = rhs.charAt(i);
                if (c == '.') {
                    if (!rhs.startsWith("...", i)) throw new RelationException("einsum: malformed ellipsis in '" + equation + "'");
                    for (int e = 0; e < ellipsis; e++) out.add(e);
                    i += 2;
                    continue;
                }
                Integer id = ids.get(c);
                if (id == null) throw new RelationException("einsum: output label '" + c + "' of '" + equation + "' does not appear in any operand");
                if (out.contains(id)) throw new RelationException("einsum: output label '" + c + "' of '" + equation + "' appears twice");
                out.add(id);
            }
        }
        return new Plan(operands, out.stream().mapToInt(Integer::intValue).toArray(), ellipsis + ids.size(), ellipsis);
    }

    private static char[] letters(String equation, String term) {
        String rest = term.replace("...", "");
        for (char c : rest.toCharArray()) {
            if (!Character.isLetter(c)) throw new RelationException("einsum: unexpected '" + c + "' in equation '" + equation + "'");
        }
        return rest.toCharArray();
    }

    static boolean relation(List<Type> types, int numInputs, EinsumAttrs a, TypeReporter reporter) {
        Type t = types.get(0);
        if (t instanceof IncompleteType) return false;
        if (!(t instanceof TupleType tuple)) throw new RelationException("einsum: tensors must be a tuple of tensors, got " + t);
        List<TensorType> xs = new ArrayList<>();
        for (Type f : tuple.fields()) {
            if (f instanceof IncompleteType) return false;
            if (!(f instanceof TensorType tt)) throw new RelationException("einsum: tensors must be a tuple of tensors, got " + t);
            xs.add(tt);
        }
        if (xs.isEmpty()) throw new RelationException("einsum: needs at least one tensor");
        DType dtype = xs.getFirst().dtype();
        for (TensorType x : xs) {
            if (!x.dtype().equals(dtype)) throw new RelationException("einsum: dtypes " + dtype + " and " + x.dtype() + " do not match");
        }
        Plan p = plan(a.equation(), xs.stream().mapToInt(TensorType::rank).toArray());
        Dim[] sizes = labelSizes(p, xs.stream().map(TensorType::shape).toList(), a.equation());
        List<Dim> out = new ArrayList<>();
        for (int id : p.output()) out.add(sizes[id]);
        reporter.assign(types.get(1), new TensorType(out, dtype));
        return true;
    }

    /** The size of each label; ellipsis dims broadcast (size 1 stretches), named labels must agree. */
    private static Dim[] labelSizes(Plan p, List<List<Dim>> shapes, String equation) {
        Dim[] sizes = new Dim[p.labelCount()];
        for (int t = 0; t < shapes.size(); t++) {
            int[] axes = p.operands().get(t);
            for (int i = 0; i < axes.length; i++) {
                Dim d = shapes.get(t).get(i);
                Dim known = sizes[axes[i]];
                boolean ellipsis = axes[i] < p.ellipsisDims();
                if (known == null || (ellipsis && known.isStatic() && known.value() == 1)) {
                    sizes[axes[i]] = d;
                } else if (known.isStatic() && d.isStatic() && known.value() != d.value() && !(ellipsis && d.value() == 1)) {
                    throw new RelationException("einsum: a label of '" + equation + "' has sizes " + known + " and " + d + " in different places");
                }
            }
        }
        for (int i = 0; i < sizes.length; i++) if (sizes[i] == null) sizes[i] = Dim.of(1);
        return sizes;
    }

    private static List<NDArray> compute(List<NDArray> in, EinsumAttrs a) {
        Plan p = plan(a.equation(), in.stream().mapToInt(NDArray::rank).toArray());
        List<List<Dim>> shapes = in.stream().map(x -> Arrays.stream(x.shape()).mapToObj(d -> Dim.of(d)).toList()).toList();
        Dim[] dims = labelSizes(p, shapes, a.equation());
        int[] size = Arrays.stream(dims).mapToInt(d -> Math.toIntExact(d.value())).toArray();
        DType dtype = in.getFirst().dtype();
        int[] outShape = Arrays.stream(p.output()).map(id -> size[id]).toArray();
        NDArray out = NDArray.zeros(dtype, outShape);
        boolean[] isOut = new boolean[size.length];
        for (int id : p.output()) isOut[id] = true;
        int[] summed = java.util.stream.IntStream.range(0, size.length).filter(id -> !isOut[id]).toArray();
        // Per operand and label: the element stride (0 where an ellipsis dim broadcasts a size of 1).
        long[][] strides = new long[in.size()][size.length];
        for (int t = 0; t < in.size(); t++) {
            int[] s = in.get(t).shape();
            int[] axes = p.operands().get(t);
            long st = 1;
            for (int i = axes.length - 1; i >= 0; i--) {
                if (s[i] != 1 || size[axes[i]] == 1) strides[t][axes[i]] += st;
                st *= s[i];
            }
        }
        boolean real = dtype.isFloat();
        int[] label = new int[size.length];
        int outCount = out.elementCount();
        for (int o = 0; o < outCount; o++) {
            int rem = o;
            for (int i = p.output().length - 1; i >= 0; i--) {
                label[p.output()[i]] = rem % outShape[i];
                rem /= outShape[i];
            }
            for (int id : summed) label[id] = 0;
            double accD = 0;
            long accL = 0;
            boolean done = summed.length > 0 && Arrays.stream(summed).anyMatch(id -> size[id] == 0);
            while (!done) {
                double termD = 1;
                long termL = 1;
                for (int t = 0; t < in.size(); t++) {
                    long idx = 0;
                    for (int id = 0; id < size.length; id++) idx += strides[t][id] * label[id];
                    if (real) termD *= in.get(t).getDouble((int) idx);
                    else termL *= in.get(t).getLong((int) idx);
                }
                accD += termD;
                accL += termL;
                int k = summed.length - 1;
                while (k >= 0 && ++label[summed[k]] == size[summed[k]]) label[summed[k--]] = 0;
                done = k < 0;
            }
            if (real) out.setDouble(o, accD);
            else out.setLong(o, accL);
        }
        return List.of(out);
    }
}
