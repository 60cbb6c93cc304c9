package dev.relayfarm.frontend;

import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX sequences and optionals, as Relay tuples whose length is known at import time (the way TVM's
 * ONNX frontend converts sequences):
 *
 * <ul>
 *   <li>a sequence of n tensors is an n-tuple ({@code ()} when empty), its elements may differ in
 *       shape; SequenceAt/Insert/Erase need their position at import time and become projections and
 *       new tuples, SequenceLength a constant, ConcatFromSequence a {@code concatenate}, SplitToSequence
 *       a {@code split}, SequenceMap its body converted once per element;
 *   <li>an optional is a 0-tuple when empty and a 1-tuple holding its value otherwise, so whether it
 *       holds a value is known at import time (OptionalHasElement is a constant).
 * </ul>
 *
 * The compiled path then runs them for free: tuples only regroup buffers. Sequence and optional graph
 * inputs get their structure from {@link ImportOptions#valueLayouts()} (from the test data, like bound
 * input shapes); Loops that carry them are unrolled ({@code ControlFlowConverters}). What this cannot
 * hold, a sequence whose length depends on data computed at run time, is an error naming the node.
 *
 * <p>A 1-tuple may be a sequence of one or an optional that holds a value; the two operators that take
 * either (OptionalHasElement, OptionalGetElement) ask the importer which ({@link OnnxNode#inputKind}).
 * SequenceEmpty's element type is not kept (a 0-tuple has none): ConcatFromSequence of an empty
 * sequence is an error.
 */
final class SequenceConverters {
    private SequenceConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("SequenceConstruct", SequenceConverters::construct);
        b.add("SequenceEmpty", SequenceConverters::empty);
        b.add("SequenceAt", SequenceConverters::at);
        b.add("SequenceInsert", SequenceConverters::insert);
        b.add("SequenceErase", SequenceConverters::erase);
        b.add("SequenceLength", n -> List.of(OnnxNode.constant(NDArray.scalar((long) elements(n, 0).size()))));
        b.add("ConcatFromSequence", SequenceConverters::concatFromSequence);
        b.add("SplitToSequence", SequenceConverters::splitToSequence);
        b.add("SequenceMap", SequenceConverters::sequenceMap);
        b.add("Optional", SequenceConverters::optional);
        b.add("OptionalHasElement", SequenceConverters::optionalHasElement);
        b.add("OptionalGetElement", SequenceConverters::optionalGetElement);
    }

    // ---------------------------------------------------------------- representation

    /** A sequence of these elements. */
    static Expr sequence(List<Expr> elements) {
        return new Tuple(elements);
    }

    /** The elements of input {@code i}, which must be a sequence (a tuple). */
    static List<Expr> elements(OnnxNode n, int i) {
        Expr e = n.input(i);
        Type t = n.typeOf(e);
        if (!(t instanceof TupleType tt) || n.inputKind(i) == TypeProto.ValueCase.OPTIONAL_TYPE || n.inputKind(i) == TypeProto.ValueCase.TENSOR_TYPE) {
            throw n.unsupported("input " + i + " must be a sequence, got " + (n.inputKind(i) == TypeProto.ValueCase.OPTIONAL_TYPE ? "an optional" : t));
        }
        if (e instanceof Tuple tup) return tup.fields();
        List<Expr> out = new ArrayList<>();
        for (int k = 0; k < tt.fields().size(); k++) out.add(new TupleGetItem(e, k));
        return out;
    }

    /** A tensor that joins {@code elements}: every element of a sequence has one element type. */
    private static TensorType element(OnnxNode n, Expr e, List<Expr> elements, String what) {
        if (!(n.typeOf(e) instanceof TensorType t)) throw n.unsupported(what + " must be a tensor, got " + n.typeOf(e));
        if (!elements.isEmpty() && n.typeOf(elements.getFirst()) instanceof TensorType first && !first.dtype().equals(t.dtype())) {
            throw n.unsupported(what + " has element type " + t.dtype() + " but the sequence holds " + first.dtype());
        }
        return t;
    }

    /**
     * Input {@code i}, a position in a sequence of {@code length}, normalized to be non-negative; it must be
     * known at import time and lie in {@code [-length, length - 1]} (or up to {@code length} when {@code end}
     * may be named, as for SequenceInsert).
     */
    static int position(OnnxNode n, int i, int length, boolean end) {
        NDArray p = n.requireConstant(i, "position");
        if (p.elementCount() != 1 || !(p.dtype().isInteger())) throw n.unsupported("position must be one integer, got " + p.dtype() + " of " + p.elementCount() + " elements");
        long v = p.getLong(0);
        long hi = end ? length : length - 1;
        if (v < -length || v > hi) {
            throw n.unsupported("position " + v + " is out of range for a sequence of " + length + " tensors (allowed " + (-length) + ".." + hi + ")");
        }
        return (int) (v < 0 ? v + length : v);
    }

    /**
     * {@code e}, let-bound unless it is a variable or constant: a value a subgraph (a nested block) uses
     * must not be a dataflow node it shares with the outer graph (see {@link GraphScope}).
     */
    static Expr bound(OnnxNode n, Expr e, String hint) {
        return e instanceof Var || e instanceof dev.relayfarm.ir.Constant ? e : n.bind(hint, e);
    }

    // ---------------------------------------------------------------- sequences

    private static List<Expr> construct(OnnxNode n) {
        List<Expr> out = new ArrayList<>();
        for (int i = 0; i < n.inputCount(); i++) {
            element(n, n.input(i), out, "input " + i);
            out.add(n.input(i));
        }
        n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
        return List.of(sequence(out));
    }

    private static List<Expr> empty(OnnxNode n) {
        // The element type is checked but not kept: an empty tuple has none.
        OnnxDTypes.require((int) n.attrInt("dtype", 1), n.where() + ": attribute dtype");
        n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
        return List.of(sequence(List.of()));
    }

    private static List<Expr> at(OnnxNode n) {
        List<Expr> seq = elements(n, 0);
        return List.of(seq.get(position(n, 1, seq.size(), false)));
    }

    private static List<Expr> insert(OnnxNode n) {
        List<Expr> seq = new ArrayList<>(elements(n, 0));
        element(n, n.input(1), seq, "the inserted tensor (input 1)");
        int at = n.hasInput(2) ? position(n, 2, seq.size(), true) : seq.size();
        seq.add(at, n.input(1));
        n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
        return List.of(sequence(seq));
    }

    private static List<Expr> erase(OnnxNode n) {
        List<Expr> seq = new ArrayList<>(elements(n, 0));
        if (seq.isEmpty()) throw n.unsupported("cannot erase from an empty sequence");
        int at = n.hasInput(1) ? position(n, 1, seq.size(), false) : seq.size() - 1;
        seq.remove(at);
        n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
        return List.of(sequence(seq));
    }

    private static List<Expr> concatFromSequence(OnnxNode n) {
        List<Expr> seq = elements(n, 0);
        if (!n.hasAttr("axis")) throw n.unsupported("attribute 'axis' is required");
        long axis = n.attrInt("axis", 0);
        long newAxis = n.attrInt("new_axis", 0);
        if (newAxis != 0 && newAxis != 1) throw n.unsupported("new_axis must be 0 or 1, got " + newAxis);
        if (seq.isEmpty()) throw n.unsupported("the sequence is empty: there is nothing to concatenate (and no element type to make an empty tensor of)");
        List<Expr> parts = new ArrayList<>();
        int rank = -1;
        for (int k = 0; k < seq.size(); k++) {
            TensorType t = element(n, seq.get(k), parts.isEmpty() ? List.of() : List.of(seq.getFirst()), "element " + k);
            if (rank >= 0 && t.rank() != rank) throw n.unsupported("element " + k + " has rank " + t.rank() + ", element 0 rank " + rank);
            rank = t.rank();
            parts.add(seq.get(k));
        }
        int outRank = rank + (int) newAxis;
        if (axis < -outRank || axis >= outRank) throw n.unsupported("axis " + axis + " is out of range for rank " + outRank + " (allowed " + (-outRank) + ".." + (outRank - 1) + ")");
        long a = axis < 0 ? axis + outRank : axis;
        if (newAxis == 1) parts.replaceAll(p -> n.call("expand_dims", List.of(p), "axis", a, "num_newaxis", 1L));
        return List.of(n.call("concatenate", List.of(new Tuple(parts)), "axis", a));
    }

    private static List<Expr> splitToSequence(OnnxNode n) {
        TensorType t = n.inputType(0);
        long axis = n.attrInt("axis", 0);
        if (axis < -t.rank() || axis >= t.rank()) throw n.unsupported("axis " + axis + " is out of range for rank " + t.rank());
        int a = (int) (axis < 0 ? axis + t.rank() : axis);
        long keepdims = n.attrInt("keepdims", 1);
        Dim d = t.shape().get(a);
        if (!d.isStatic()) throw n.unsupported("the split dim " + a + " of " + t + " must be static (a sequence's length is fixed at import time)");
        long dim = d.value();
        List<Long> sizes = new ArrayList<>();
        boolean squeeze = false;
        if (!n.hasInput(1)) {
            for (long k = 0; k < dim; k++) sizes.add(1L);
            squeeze = keepdims == 0;
        } else {
            NDArray split = n.requireConstant(1, "split");
            if (split.rank() == 0) {
                long chunk = split.getLong(0);
                if (chunk <= 0) throw n.unsupported("split must be positive, got " + chunk);
                for (long done = 0; done < dim; done += chunk) sizes.add(Math.min(chunk, dim - done));
            } else if (split.rank() == 1) {
                long sum = 0;
                for (int k = 0; k < split.elementCount(); k++) {
                    long s = split.getLong(k);
                    if (s < 0) throw n.unsupported("split sizes must not be negative, got " + s);
                    sizes.add(s);
                    sum += s;
                }
                if (sum != dim) throw n.unsupported("split sizes add up to " + sum + " but dim " + a + " is " + dim);
            } else {
                throw n.unsupported("split must be a scalar or a 1-D tensor, got rank " + split.rank());
            }
        }
        List<Expr> parts = new ArrayList<>();
        if (sizes.size() == 1) {
            parts.add(n.input(0));
        } else if (!sizes.isEmpty()) {
            long[] indices = new long[sizes.size() - 1];
            long acc = 0;
            for (int k = 0; k < indices.length; k++) indices[k] = acc += sizes.get(k);
            Var pieces = n.bind("split", n.call("split", List.of(n.input(0)), "indices_or_sections", indices, "axis", (long) a));
            for (int k = 0; k < sizes.size(); k++) parts.add(new TupleGetItem(pieces, k));
        }
        if (squeeze) parts.replaceAll(p -> n.call("squeeze", List.of(p), "axis", new long[] {a}));
        n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
        return List.of(sequence(parts));
    }

    /**
     * The body once per element: inputs that are sequences give their k-th element, tensors themselves;
     * output j collects the body's j-th output of every round.
     */
    private static List<Expr> sequenceMap(OnnxNode n) {
        GraphProto body = n.attrGraph("body");
        List<List<Expr>> seqs = new ArrayList<>();
        int length = elements(n, 0).size();
        for (int i = 0; i < n.inputCount(); i++) {
            boolean isSeq = i == 0 || n.typeOf(n.input(i)) instanceof TupleType;
            List<Expr> els = isSeq ? elements(n, i) : null;
            if (els != null && els.size() != length) throw n.unsupported("input " + i + " has " + els.size() + " elements, input 0 " + length);
            seqs.add(els);
        }
        if (body.getInputCount() != n.inputCount()) throw n.unsupported("the body has " + body.getInputCount() + " inputs, the node " + n.inputCount());
        int outs = body.getOutputCount();
        List<List<Expr>> results = new ArrayList<>();
        for (int j = 0; j < outs; j++) results.add(new ArrayList<>());
        for (int k = 0; k < length; k++) {
            List<Expr> in = new ArrayList<>();
            for (int i = 0; i < n.inputCount(); i++) in.add(bound(n, seqs.get(i) != null ? seqs.get(i).get(k) : n.input(i), "map_in"));
            OnnxImporter.Subgraph sub = n.convertSubgraph(body, in);
            Var round = n.bind("map" + k, sub.wrap(new Tuple(sub.outputs())));
            for (int j = 0; j < outs; j++) {
                if (!(n.typeOf(sub.outputs().get(j)) instanceof TensorType)) throw n.unsupported("body output " + j + " must be a tensor, got " + n.typeOf(sub.outputs().get(j)));
                results.get(j).add(new TupleGetItem(round, j));
            }
        }
        List<Expr> out = new ArrayList<>();
        for (int j = 0; j < outs; j++) {
            n.recordOutputKind(j, TypeProto.ValueCase.SEQUENCE_TYPE);
            out.add(sequence(results.get(j)));
        }
        return out;
    }

    // ---------------------------------------------------------------- optionals

    private static List<Expr> optional(OnnxNode n) {
        n.recordOutputKind(0, TypeProto.ValueCase.OPTIONAL_TYPE);
        if (n.hasInput(0)) {
            n.ignore("type"); // the value's own type says it
            return List.of(new Tuple(List.of(n.input(0))));
        }
        if (!n.hasAttr("type")) throw n.unsupported("an Optional without input needs attribute 'type'");
        n.ignore("type"); // an empty optional is () whatever it would hold
        return List.of(new Tuple(List.of()));
    }

    /** What input 0 holds when it is an optional: null when empty; a sequence or tensor stands for itself. */
    private sealed interface Held {}

    private record Empty() implements Held {}

    private record Value(Expr value) implements Held {}

    private static Held held(OnnxNode n) {
        Expr e = n.input(0);
        Type t = n.typeOf(e);
        if (t instanceof TensorType) return new Value(e);
        if (!(t instanceof TupleType tt)) throw n.unsupported("input 0 must be an optional, a tensor or a sequence, got " + t);
        TypeProto.ValueCase kind = n.inputKind(0);
        int size = tt.fields().size();
        if (kind == TypeProto.ValueCase.SEQUENCE_TYPE || (kind != TypeProto.ValueCase.OPTIONAL_TYPE && size > 1)) return new Value(e);
        if (kind == TypeProto.ValueCase.OPTIONAL_TYPE && size > 1) throw n.unsupported("input 0 is an optional but holds " + size + " values");
        if (kind != TypeProto.ValueCase.OPTIONAL_TYPE) {
            throw n.unsupported("cannot tell whether input 0 (a " + size + "-tuple) is an optional or a sequence: the model does not declare its type");
        }
        if (size == 0) return new Empty();
        return new Value(e instanceof Tuple tup ? tup.fields().getFirst() : new TupleGetItem(e, 0));
    }

    private static List<Expr> optionalHasElement(OnnxNode n) {
        boolean has = n.hasInput(0) && held(n) instanceof Value;
        return List.of(OnnxNode.constant(NDArray.scalar(has)));
    }

    private static List<Expr> optionalGetElement(OnnxNode n) {
        return switch (held(n)) {
            case Empty e -> throw n.unsupported("the optional input is empty: it has no element to get");
            case Value v -> {
                // An optional holds a tensor or a sequence (ONNX has no optional of optional): a tuple is a sequence.
                if (n.typeOf(v.value()) instanceof TupleType) n.recordOutputKind(0, TypeProto.ValueCase.SEQUENCE_TYPE);
                yield List.of(v.value());
            }
        };
    }

}
