package dev.relayfarm.frontend;

import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * ONNX control flow: {@code If} becomes a Relay {@code if} whose branches are the converted
 * subgraphs (nested blocks that may use outer values); {@code Loop} and {@code Scan} become
 * tail-recursive local functions, the way the Relay paper converts TensorFlow's while loops:
 *
 * <pre>
 * let %loop = fn (%i: int64, %cond: bool, %v: T, %acc: Tensor[(?, ...)]) -&gt; (T, Tensor[(?, ...)]) {
 *   if (%i &lt; %M &amp;&amp; %cond) {
 *     ...body...;
 *     %loop(%i + 1, %cond_out, %v_out, concatenate((%acc, expand_dims(%scan_out, 0))))
 *   } else {
 *     (%v, %acc)
 *   }
 * };
 * %loop(0i64, %cond_init, %v_init, zeros(0, ...))
 * </pre>
 *
 * Scan outputs are accumulated by concatenating one slice per iteration onto a tensor that starts
 * empty, so their leading (scan) dim is {@code ?}. A loop-carried value whose shape changes from one
 * iteration to the next gets {@code ?} in the dims that change: the body is converted, its outputs'
 * types are joined with the inputs', and it is converted again until they agree.
 */
final class ControlFlowConverters {
    private ControlFlowConverters() {}

    /** Rounds of body conversion before giving up on loop-carried types settling (each round can only add {@code ?}s). */
    private static final int MAX_TYPE_ROUNDS = 8;

    static void register(OnnxConverters.Builder b) {
        b.add("If", ControlFlowConverters::ifNode);
        b.add("Loop", ControlFlowConverters::loop);
        b.add("Scan", ControlFlowConverters::scan);
    }

    // ---------------------------------------------------------------- If

    private static List<Expr> ifNode(OnnxNode n) {
        Expr cond = scalarCondition(n, n.input(0), "cond");
        GraphProto thenG = n.attrGraph("then_branch");
        GraphProto elseG = n.attrGraph("else_branch");
        Optional<NDArray> known = n.constantInput(0);
        if (known.isPresent() && known.get().elementCount() == 1) {
            // Only the branch taken is converted, inline: the other may not even be valid for these values (the element of an
            // empty optional, a sequence of another length: see SequenceConverters; AffineGrid's split of a 2-D or 3-D size),
            // and the branch's outputs stay constants where they are (AffineGrid expands to a shape computed there).
            GraphProto taken = known.get().getLong(0) != 0 ? thenG : elseG;
            List<Expr> outs = n.convertInline(taken);
            if (outs.size() < n.outputCount()) {
                throw n.unsupported("the branch taken produces " + outs.size() + " outputs, the node has " + n.outputCount());
            }
            recordBranchKinds(n, taken);
            return outs;
        }
        OnnxImporter.Subgraph th = n.convertSubgraph(thenG, List.of());
        OnnxImporter.Subgraph el = n.convertSubgraph(elseG, List.of());
        if (th.outputs().size() != el.outputs().size()) {
            throw n.unsupported("then_branch has " + th.outputs().size() + " outputs, else_branch " + el.outputs().size());
        }
        if (th.outputs().size() < n.outputCount()) {
            throw n.unsupported("the branches produce " + th.outputs().size() + " outputs, the node has " + n.outputCount());
        }
        for (int k = 0; k < th.outputs().size(); k++) {
            Type a = n.typeOf(th.outputs().get(k));
            Type b = n.typeOf(el.outputs().get(k));
            if ((a instanceof TupleType || b instanceof TupleType) && !a.equals(b)) {
                // Sequences and optionals are tuples of static length: a Relay if cannot return either.
                n.requireConstant(0, "cond (the branches' output " + k + " differ in structure: " + a + " vs " + b + ")");
            }
        }
        recordBranchKinds(n, thenG);
        Expr result = new If(cond, th.wrap(packed(th.outputs())), el.wrap(packed(el.outputs())));
        return unpacked(n.bind("if_out", result), th.outputs().size());
    }

    /** The node's outputs are what the branch declares its outputs to be (a sequence, an optional). */
    private static void recordBranchKinds(OnnxNode n, GraphProto branch) {
        for (int k = 0; k < branch.getOutputCount() && k < n.outputCount(); k++) {
            n.recordOutputKind(k, branch.getOutput(k).getType().getValueCase());
        }
    }

    /** A bool condition as a scalar: ONNX allows any one-element tensor. */
    private static Expr scalarCondition(OnnxNode n, Expr cond, String what) {
        Type t = n.typeOf(cond);
        if (!(t instanceof TensorType tt) || !tt.dtype().equals(DType.BOOL)) throw n.unsupported(what + " must be a bool tensor, got " + t);
        if (tt.rank() == 0) return cond;
        if (!tt.isStatic() || tt.staticShape().length > 0 && java.util.Arrays.stream(tt.staticShape()).reduce(1, (x, y) -> x * y) != 1) {
            throw n.unsupported(what + " must hold exactly one element, got " + t);
        }
        return n.call("reshape", List.of(cond), "newshape", new long[0]);
    }

    /** An int64 count as a scalar (trip counts may be {@code [1]}-shaped). */
    private static Expr scalarInt64(OnnxNode n, Expr e, String what) {
        Type t = n.typeOf(e);
        if (!(t instanceof TensorType tt) || !tt.dtype().isInteger()) throw n.unsupported(what + " must be an integer tensor, got " + t);
        Expr x = tt.rank() == 0 ? e : n.call("reshape", List.of(e), "newshape", new long[0]);
        return tt.dtype().equals(DType.INT64) ? x : n.call("cast", List.of(x), "dtype", "int64");
    }

    private static Expr packed(List<Expr> values) {
        return values.size() == 1 ? values.getFirst() : new Tuple(values);
    }

    private static List<Expr> unpacked(Expr packed, int count) {
        if (count == 1) return List.of(packed);
        List<Expr> out = new ArrayList<>();
        for (int i = 0; i < count; i++) out.add(new TupleGetItem(packed, i));
        return out;
    }

    // ---------------------------------------------------------------- Loop

    private static List<Expr> loop(OnnxNode n) {
        GraphProto body = n.attrGraph("body");
        List<Expr> initial = new ArrayList<>();
        for (int i = 2; i < n.inputCount(); i++) initial.add(n.input(i));
        int carried = initial.size();
        int scans = body.getOutputCount() - 1 - carried;
        if (body.getInputCount() != 2 + carried || scans < 0) {
            throw n.unsupported("the body has " + body.getInputCount() + " inputs and " + body.getOutputCount() + " outputs for "
                    + carried + " loop-carried values (expected " + (2 + carried) + " inputs, at least " + (1 + carried) + " outputs)");
        }
        List<Type> carriedTypes = new ArrayList<>();
        for (Expr e : initial) carriedTypes.add(n.typeOf(e));
        if (carriedTypes.stream().anyMatch(t -> t instanceof TupleType)) return unrolledLoop(n, body, initial, scans);
        // Used inside the loop function: bound first, so the function body refers to a variable.
        Expr maxTrips = n.hasInput(0) ? outside(n, scalarInt64(n, n.input(0), "M (the trip count)"), "trip_count") : null;
        Expr condInit = n.hasInput(1) ? scalarCondition(n, n.input(1), "cond") : null;
        TensorType i64 = TensorType.scalar(DType.INT64);
        TensorType bool = TensorType.scalar(DType.BOOL);
        for (int round = 0; ; round++) {
            Var i = Var.fresh("i", i64);
            Var cond = Var.fresh("cond", bool);
            List<Var> vars = new ArrayList<>();
            for (int k = 0; k < carried; k++) vars.add(Var.fresh(GraphScope.sanitize(body.getInput(2 + k).getName()), carriedTypes.get(k)));
            List<Expr> bodyInputs = new ArrayList<>(List.of(i, cond));
            bodyInputs.addAll(vars);
            OnnxImporter.Subgraph sub = n.convertSubgraph(body, bodyInputs);
            List<Expr> outs = sub.outputs();
            List<Type> next = new ArrayList<>();
            for (int k = 0; k < carried; k++) next.add(ForwardTyper.join(carriedTypes.get(k), n.typeOf(outs.get(1 + k))));
            if (!next.equals(carriedTypes)) {
                if (round >= MAX_TYPE_ROUNDS) throw n.unsupported("the types of the loop-carried values do not settle: " + next);
                carriedTypes = next;
                continue;
            }
            // Types settled: build the recursive function around this conversion of the body.
            List<Var> accs = new ArrayList<>();
            List<Expr> accInit = new ArrayList<>();
            List<Type> accTypes = new ArrayList<>();
            for (int k = 0; k < scans; k++) {
                TensorType el = tensor(n, outs.get(1 + carried + k), "scan output " + k);
                accTypes.add(accumulatorType(el, 0));
                accs.add(Var.fresh("acc" + k, accTypes.getLast()));
                accInit.add(emptyAccumulator(n, el, 0));
            }
            List<Type> paramTypes = new ArrayList<>(List.of(i64, bool));
            paramTypes.addAll(carriedTypes);
            paramTypes.addAll(accTypes);
            List<Type> resultTypes = new ArrayList<>(carriedTypes);
            resultTypes.addAll(accTypes);
            TupleType resultType = new TupleType(resultTypes);
            Var self = Var.fresh("loop", new FuncType(paramTypes, resultType));

            List<Expr> again = new ArrayList<>();
            again.add(n.call("add", i, OnnxNode.constant(NDArray.scalar(1L))));
            again.add(condInit == null ? OnnxNode.constant(NDArray.scalar(true)) : scalarCondition(n, outs.getFirst(), "the body's condition output"));
            for (int k = 0; k < carried; k++) again.add(outs.get(1 + k));
            for (int k = 0; k < scans; k++) again.add(append(n, accs.get(k), outs.get(1 + carried + k), 0, false));
            Expr continueBranch = sub.wrap(new Call(self, again));
            List<Expr> finals = new ArrayList<>(vars);
            finals.addAll(accs);
            Expr test = maxTrips == null ? cond : condInit == null ? n.call("less", i, maxTrips) : n.call("logical_and", n.call("less", i, maxTrips), cond);
            if (maxTrips == null && condInit == null) throw n.unsupported("a loop with neither a trip count nor a condition never ends");
            List<Var> params = new ArrayList<>(List.of(i, cond));
            params.addAll(vars);
            params.addAll(accs);
            n.bind(self, new Function(params, new If(test, continueBranch, new Tuple(finals)), resultType));

            List<Expr> start = new ArrayList<>();
            start.add(OnnxNode.constant(NDArray.scalar(0L)));
            start.add(condInit == null ? OnnxNode.constant(NDArray.scalar(true)) : condInit);
            start.addAll(initial);
            start.addAll(accInit);
            Var result = n.bind("loop_out", new Call(self, start));
            List<Expr> out = new ArrayList<>();
            for (int k = 0; k < carried + scans; k++) out.add(new TupleGetItem(result, k));
            return out;
        }
    }

    /** The most iterations a loop carrying a sequence or optional is unrolled to. */
    static final int MAX_UNROLLED = 4096;

    /**
     * A loop that carries a sequence or optional: those are tuples whose length is static, and a loop
     * usually changes it (SequenceInsert per iteration), so the loop is unrolled at import time. The trip
     * count and the condition must be known then (the body's condition output too, after folding).
     */
    private static List<Expr> unrolledLoop(OnnxNode n, GraphProto body, List<Expr> initial, int scans) {
        String why = " (a loop carrying a sequence or optional is unrolled at import time)";
        if (scans > 0) throw n.unsupported("scan outputs of a loop carrying a sequence or optional are not supported");
        Long maxTrips = n.hasInput(0) ? n.requireConstant(0, "M (the trip count" + why + ")").getLong(0) : null;
        Boolean condInit = n.hasInput(1) ? n.requireConstant(1, "cond" + why).getLong(0) != 0 : null;
        if (maxTrips == null && condInit == null) throw n.unsupported("a loop with neither a trip count nor a condition never ends");
        int carried = initial.size();
        List<Expr> values = initial;
        // Which carried values are optionals: a sequence or tensor carried into a body input declared
        // optional holds a value, so it enters as the 1-tuple of an optional.
        List<Boolean> optional = new ArrayList<>();
        for (int k = 0; k < carried; k++) optional.add(n.inputKind(2 + k) == TypeProto.ValueCase.OPTIONAL_TYPE);
        boolean going = condInit == null || condInit;
        for (long i = 0; going && (maxTrips == null || i < maxTrips); i++) {
            if (i >= MAX_UNROLLED) throw n.unsupported("the loop runs more than " + MAX_UNROLLED + " iterations" + why);
            List<Expr> in = new ArrayList<>();
            in.add(OnnxNode.constant(NDArray.scalar(i)));
            in.add(OnnxNode.constant(NDArray.scalar(true)));
            for (int k = 0; k < carried; k++) {
                boolean wrap = body.getInput(2 + k).getType().hasOptionalType() && !optional.get(k);
                Expr v = SequenceConverters.bound(n, values.get(k), "carried");
                in.add(wrap ? new Tuple(List.of(v)) : v);
            }
            OnnxImporter.Subgraph sub = n.convertSubgraph(body, in);
            if (condInit != null) {
                if (!(n.importer().fold(sub.outputs().getFirst(), n) instanceof Constant c)) {
                    throw n.unsupported("the body's condition output must be known at import time" + why);
                }
                going = c.data().getLong(0) != 0;
            }
            Var round = n.bind("iter" + i, sub.wrap(new Tuple(sub.outputs().subList(1, 1 + carried))));
            List<Expr> next = new ArrayList<>();
            for (int k = 0; k < carried; k++) {
                next.add(new TupleGetItem(round, k));
                optional.set(k, n.importer().kindOf(body.getOutput(1 + k).getName()) == TypeProto.ValueCase.OPTIONAL_TYPE);
            }
            values = next;
        }
        for (int k = 0; k < carried && k < body.getOutputCount() - 1; k++) n.recordOutputKind(k, body.getOutput(1 + k).getType().getValueCase());
        return values;
    }

    private static TensorType tensor(OnnxNode n, Expr e, String what) {
        Type t = n.typeOf(e);
        if (t instanceof TensorType tt) return tt;
        throw n.unsupported(what + " must be a tensor, got " + t);
    }

    /** The type of slices of type {@code el} stacked along {@code axis}: that dim is {@code ?}. */
    private static TensorType accumulatorType(TensorType el, int axis) {
        List<Dim> dims = new ArrayList<>(el.shape());
        dims.add(axis, Dim.ANY);
        return new TensorType(dims, el.dtype());
    }

    /** {@code zeros} with a 0 at {@code axis}: the accumulator before the first iteration. */
    private static Expr emptyAccumulator(OnnxNode n, TensorType el, int axis) {
        if (!el.isStatic()) throw n.unsupported("a scan output of dynamic shape " + el + " is not supported");
        List<Long> shape = new ArrayList<>();
        for (int d : el.staticShape()) shape.add((long) d);
        shape.add(axis, 0L);
        Expr zeros = new Call(dev.relayfarm.ir.Op.get("zeros"), List.of(),
                dev.relayfarm.ir.Attrs.EMPTY.with("shape", OnnxNode.attrValue(shape)).with("dtype", OnnxNode.attrValue(el.dtype().toString())));
        // Typed as the accumulator (leading ?), so the recursive call's argument matches its parameter.
        n.importer().typer().declare(zeros, accumulatorType(el, axis));
        return zeros;
    }

    /** {@code acc} with {@code slice} added at the end (or the front) along {@code axis}. */
    private static Expr append(OnnxNode n, Expr acc, Expr slice, int axis, boolean prepend) {
        Expr one = n.call("expand_dims", List.of(slice), "axis", (long) axis, "num_newaxis", 1L);
        Tuple parts = prepend ? new Tuple(List.of(one, acc)) : new Tuple(List.of(acc, one));
        return n.call("concatenate", List.of(parts), "axis", (long) axis);
    }

    // ---------------------------------------------------------------- Scan

    /**
     * Scan (opset 9+): {@code num_scan_inputs} of the inputs are iterated along their scan axis (one
     * slice per iteration, forward or reverse), the others are state carried from one iteration to
     * the next; the body's extra outputs are stacked along their output axis.
     */
    private static List<Expr> scan(OnnxNode n) {
        if (n.opset() < 9) return batchedScan(n);
        GraphProto body = n.attrGraph("body");
        int numScanIn = Math.toIntExact(n.attrInt("num_scan_inputs", -1));
        if (numScanIn < 1 || numScanIn > n.inputCount()) throw n.unsupported("num_scan_inputs must be in [1, " + n.inputCount() + "], got " + numScanIn);
        int states = n.inputCount() - numScanIn;
        int scanOuts = body.getOutputCount() - states;
        if (body.getInputCount() != n.inputCount() || scanOuts < 0) {
            throw n.unsupported("the body has " + body.getInputCount() + " inputs and " + body.getOutputCount() + " outputs for "
                    + states + " state and " + numScanIn + " scan inputs");
        }
        long[] inAxes = orZeros(n.attrInts("scan_input_axes"), numScanIn, n, "scan_input_axes");
        long[] inDirs = orZeros(n.attrInts("scan_input_directions"), numScanIn, n, "scan_input_directions");
        long[] outAxes = orZeros(n.attrInts("scan_output_axes"), scanOuts, n, "scan_output_axes");
        long[] outDirs = orZeros(n.attrInts("scan_output_directions"), scanOuts, n, "scan_output_directions");

        List<Expr> inits = new ArrayList<>(), xs = new ArrayList<>();
        for (int k = 0; k < states; k++) inits.add(n.input(k));
        for (int k = 0; k < numScanIn; k++) xs.add(n.input(states + k));
        return scanLoop(n, body, inits, xs, inAxes, inDirs, outAxes, outDirs);
    }

    /**
     * Scan before opset 9: every input and output has a batch axis 0 (scan inputs scan along axis 1),
     * sequence_lens comes first, {@code directions} names the scan inputs' directions. Each batch
     * element runs as its own opset-9 scan and the results are stacked; the batch must be static and
     * sequence_lens absent or the full length for every element (shorter sequences are not supported).
     */
    private static List<Expr> batchedScan(OnnxNode n) {
        GraphProto body = n.attrGraph("body");
        int numScanIn = Math.toIntExact(n.attrInt("num_scan_inputs", -1));
        int given = n.inputCount() - 1;
        if (numScanIn < 1 || numScanIn > given) throw n.unsupported("num_scan_inputs must be in [1, " + given + "], got " + numScanIn);
        int states = given - numScanIn;
        int scanOuts = body.getOutputCount() - states;
        if (body.getInputCount() != given || scanOuts < 0) {
            throw n.unsupported("the body has " + body.getInputCount() + " inputs and " + body.getOutputCount() + " outputs for "
                    + states + " state and " + numScanIn + " scan inputs");
        }
        long[] dirs = orZeros(n.attrInts("directions"), numScanIn, n, "directions");
        TensorType first = tensor(n, n.input(1 + states), "scan input 0");
        if (first.rank() < 2 || !first.shape().get(0).isStatic() || !first.shape().get(1).isStatic()) {
            throw n.unsupported("scan input 0 must have a static batch axis 0 and sequence axis 1, got " + first);
        }
        int batch = Math.toIntExact(first.shape().get(0).value());
        long steps = first.shape().get(1).value();
        if (batch > 64) throw n.unsupported("a batch of " + batch + " (more than 64) would convert the body once per element");
        if (n.hasInput(0)) {
            for (long len : n.constantInts(0, "sequence_lens")) {
                if (len != steps) throw n.unsupported("sequence_lens " + len + " is shorter than the sequence (" + steps + "); only full sequences are supported");
            }
        }
        List<List<Expr>> perElement = new ArrayList<>();
        for (int b = 0; b < batch; b++) {
            Expr index = OnnxNode.constant(NDArray.scalar((long) b));
            List<Expr> inits = new ArrayList<>(), xs = new ArrayList<>();
            for (int k = 0; k < given; k++) {
                Expr e = n.call("take", List.of(outside(n, n.input(1 + k), "batched"), index), "axis", 0L, "mode", "fast");
                (k < states ? inits : xs).add(e);
            }
            perElement.add(scanLoop(n, body, inits, xs, new long[numScanIn], dirs, new long[scanOuts], new long[scanOuts]));
        }
        List<Expr> out = new ArrayList<>();
        for (int k = 0; k < states + scanOuts; k++) {
            List<Expr> parts = new ArrayList<>();
            for (List<Expr> e : perElement) parts.add(e.get(k));
            out.add(n.call("stack", List.of(new Tuple(parts)), "axis", 0L));
        }
        return out;
    }

    /** The opset-9 scan loop over state initial values {@code inits} and scan inputs {@code xs}. */
    private static List<Expr> scanLoop(OnnxNode n, GraphProto body, List<Expr> inits, List<Expr> xs, long[] inAxes, long[] inDirs, long[] outAxes,
                                       long[] outDirs) {
        int states = inits.size(), numScanIn = xs.size(), scanOuts = outAxes.length;
        List<Expr> scanInputs = new ArrayList<>();
        List<TensorType> scanTypes = new ArrayList<>();
        for (int k = 0; k < numScanIn; k++) {
            Expr x = xs.get(k);
            TensorType t = tensor(n, x, "scan input " + k);
            if (inAxes[k] < 0) inAxes[k] += t.rank();
            if (inAxes[k] < 0 || inAxes[k] >= t.rank()) throw n.unsupported("scan_input_axes[" + k + "] is out of range for " + t);
            scanInputs.add(outside(n, x, "scan_in"));
            scanTypes.add(t);
        }
        Expr length = outside(n, sequenceLength(n, scanInputs.getFirst(), scanTypes.getFirst(), (int) inAxes[0]), "length");
        TensorType i64 = TensorType.scalar(DType.INT64);
        List<Type> stateTypes = new ArrayList<>();
        for (int k = 0; k < states; k++) stateTypes.add(n.typeOf(inits.get(k)));

        for (int round = 0; ; round++) {
            Var i = Var.fresh("i", i64);
            List<Var> vars = new ArrayList<>();
            for (int k = 0; k < states; k++) vars.add(Var.fresh(GraphScope.sanitize(body.getInput(k).getName()), stateTypes.get(k)));
            List<Expr> bodyInputs = new ArrayList<>(vars);
            for (int k = 0; k < numScanIn; k++) {
                Expr index = inDirs[k] == 0 ? i : n.call("subtract", n.call("subtract", length, i), OnnxNode.constant(NDArray.scalar(1L)));
                bodyInputs.add(n.call("take", List.of(scanInputs.get(k), index), "axis", inAxes[k], "mode", "fast"));
            }
            OnnxImporter.Subgraph sub = n.convertSubgraph(body, bodyInputs);
            List<Expr> outs = sub.outputs();
            List<Type> next = new ArrayList<>();
            for (int k = 0; k < states; k++) next.add(ForwardTyper.join(stateTypes.get(k), n.typeOf(outs.get(k))));
            if (!next.equals(stateTypes)) {
                if (round >= MAX_TYPE_ROUNDS) throw n.unsupported("the types of the scan state do not settle: " + next);
                stateTypes = next;
                continue;
            }
            List<Var> accs = new ArrayList<>();
            List<Expr> accInit = new ArrayList<>();
            List<Type> accTypes = new ArrayList<>();
            for (int k = 0; k < scanOuts; k++) {
                TensorType el = tensor(n, outs.get(states + k), "scan output " + k);
                int axis = (int) (outAxes[k] < 0 ? outAxes[k] + el.rank() + 1 : outAxes[k]);
                if (axis < 0 || axis > el.rank()) throw n.unsupported("scan_output_axes[" + k + "] is out of range for rank " + (el.rank() + 1));
                outAxes[k] = axis;
                accTypes.add(accumulatorType(el, axis));
                accs.add(Var.fresh("acc" + k, accTypes.getLast()));
                accInit.add(emptyAccumulator(n, el, axis));
            }
            List<Type> paramTypes = new ArrayList<>(List.of(i64));
            paramTypes.addAll(stateTypes);
            paramTypes.addAll(accTypes);
            List<Type> resultTypes = new ArrayList<>(stateTypes);
            resultTypes.addAll(accTypes);
            TupleType resultType = new TupleType(resultTypes);
            Var self = Var.fresh("scan", new FuncType(paramTypes, resultType));

            List<Expr> again = new ArrayList<>();
            again.add(n.call("add", i, OnnxNode.constant(NDArray.scalar(1L))));
            for (int k = 0; k < states; k++) again.add(outs.get(k));
            for (int k = 0; k < scanOuts; k++) again.add(append(n, accs.get(k), outs.get(states + k), (int) outAxes[k], outDirs[k] != 0));
            List<Expr> finals = new ArrayList<>(vars);
            finals.addAll(accs);
            List<Var> params = new ArrayList<>(List.of(i));
            params.addAll(vars);
            params.addAll(accs);
            n.bind(self, new Function(params, new If(n.call("less", i, length), sub.wrap(new Call(self, again)), new Tuple(finals)), resultType));

            List<Expr> start = new ArrayList<>();
            start.add(OnnxNode.constant(NDArray.scalar(0L)));
            start.addAll(inits);
            start.addAll(accInit);
            Var result = n.bind("scan_out", new Call(self, start));
            List<Expr> out = new ArrayList<>();
            for (int k = 0; k < states + scanOuts; k++) out.add(new TupleGetItem(result, k));
            return out;
        }
    }

    /**
     * {@code e} as something a nested function body may use: constants and variables as they are,
     * anything computed bound with a {@code let} in the node's graph (see {@link GraphScope}).
     */
    private static Expr outside(OnnxNode n, Expr e, String hint) {
        return e instanceof Var || e instanceof Constant ? e : n.bind(hint, e);
    }

    private static long[] orZeros(long[] given, int count, OnnxNode n, String what) {
        if (given == null) return new long[count];
        if (given.length != count) throw n.unsupported(what + " has " + given.length + " entries, expected " + count);
        for (long d : given) if (what.endsWith("directions") && d != 0 && d != 1) throw n.unsupported(what + " must hold 0 or 1, got " + d);
        return given.clone();
    }

    /** The number of iterations: the scan axis' length, a constant when static. */
    private static Expr sequenceLength(OnnxNode n, Expr x, TensorType t, int axis) {
        Dim d = t.shape().get(axis);
        if (d instanceof Dim.Int(long v)) return OnnxNode.constant(NDArray.scalar(v));
        Expr shape = n.call("shape_of", List.of(x), "dtype", "int64");
        return n.call("take", List.of(shape, OnnxNode.constant(NDArray.scalar((long) axis))), "axis", 0L, "mode", "fast");
    }
}
