package dev.relayfarm.compile;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the @main of an optimized module (after fuse-ops: dataflow over calls of Primitive
 * functions, tuples, projections, lets, constants) into a {@link GraphPlan}.
 *
 * <p>Each call of a Primitive function becomes a kernel call; structurally equal Primitive functions
 * share one kernel. Tuples and projections cost nothing: they only regroup buffers. Constants become
 * parameters. A graph output produced by a kernel is written by that kernel straight into the
 * caller's output buffer; an output no kernel produces (an input or constant returned as is, or a
 * value returned twice) is copied at the end.
 *
 * <p>Not supported (errors naming the node): control flow (if/match), references, closures, operator
 * calls outside a fused function (compile after fuse-ops, i.e. at -O1 or higher), dynamic shapes.
 * The walk is iterative, so 100,000-long chains are fine.
 */
public final class GraphBuilder {
    /** What an expression evaluates to at plan time: a buffer, a tuple of values, or a fused function. */
    private sealed interface Value {}

    private record Leaf(Slot slot) implements Value {}

    private record Tup(List<Value> fields) implements Value {}

    private record Fn(Function function) implements Value {}

    private final IRModule module;
    private final InferResult types;
    private final Map<Expr, Value> values = new IdentityHashMap<>();
    private final Map<Var, Expr> letValues = new IdentityHashMap<>();
    private final Map<Var, Integer> inputIndex = new IdentityHashMap<>();
    private final List<TensorSpec> inputs = new ArrayList<>();
    private final List<TensorSpec> temps = new ArrayList<>();
    private final List<TensorSpec> paramSpecs = new ArrayList<>();
    private final List<NDArray> params = new ArrayList<>();
    private final KernelTable kernels = new KernelTable();
    private final List<Step> steps = new ArrayList<>();

    private GraphBuilder(IRModule module) {
        this.module = module;
        this.types = TypeInference.infer(module);
    }

    /** The plan of {@code module}'s @main. */
    public static GraphPlan build(IRModule module) {
        Function main = module.main().orElseThrow(() -> new GraphException("the module has no @main"));
        return new GraphBuilder(module).plan(main);
    }

    private GraphPlan plan(Function main) {
        for (Var p : main.params()) {
            Type t = types.typeOf(p);
            if (!(t instanceof TensorType tt)) throw new GraphException("input %" + p.name() + " of @main has type " + t + ": only tensor inputs are supported");
            inputIndex.put(p, inputs.size());
            values.put(p, new Leaf(new Slot.Input(inputs.size())));
            inputs.add(spec(p.name(), tt, "input %" + p.name() + " of @main"));
        }
        for (Expr e : postOrder(main.body())) values.put(e, evaluate(e));
        List<Slot> result = new ArrayList<>();
        flatten(value(main.body()), result);
        return finish(result, flattenTypes(types.typeOf(main.body()), "the result of @main"));
    }

    /** Post-order over the dataflow, not entering function bodies; records let bindings on the way down. */
    private List<Expr> postOrder(Expr root) {
        List<Expr> out = new ArrayList<>();
        Map<Expr, Boolean> seen = new IdentityHashMap<>();
        ArrayDeque<Expr> stack = new ArrayDeque<>();
        ArrayDeque<Boolean> expanded = new ArrayDeque<>();
        stack.push(root);
        expanded.push(false);
        while (!stack.isEmpty()) {
            Expr e = stack.pop();
            boolean done = expanded.pop();
            if (done) {
                out.add(e);
                continue;
            }
            if (seen.put(e, true) != null) continue;
            stack.push(e);
            expanded.push(true);
            List<Expr> kids = switch (e) {
                case Function f -> List.of();
                case Let l -> {
                    letValues.put(l.var(), l.value());
                    yield List.of(l.value(), l.body());
                }
                case Call c -> {
                    List<Expr> k = new ArrayList<>();
                    if (!(c.callee() instanceof Op)) k.add(c.callee());
                    k.addAll(c.args());
                    yield k;
                }
                default -> e.children();
            };
            // Push in reverse so children are visited left to right (arguments evaluate in order).
            for (int i = kids.size() - 1; i >= 0; i--) {
                if (!seen.containsKey(kids.get(i))) {
                    stack.push(kids.get(i));
                    expanded.push(false);
                }
            }
        }
        return out;
    }

    private Value value(Expr e) {
        Value v = values.get(e);
        if (v != null) return v;
        if (e instanceof Var var && letValues.containsKey(var)) {
            Value bound = value(letValues.get(var));
            values.put(var, bound);
            return bound;
        }
        throw new GraphException("no value for " + describe(e) + " (free variable?)");
    }

    private Value evaluate(Expr e) {
        return switch (e) {
            case Var v -> {
                if (inputIndex.containsKey(v)) yield values.get(v);
                if (letValues.containsKey(v)) yield null; // resolved lazily through value(): its let may not have been reached yet
                throw new GraphException("free variable %" + v.name() + " in @main");
            }
            case Constant c -> {
                Type t = c.type();
                TensorSpec s = spec("p" + params.size(), (TensorType) t, "a constant");
                paramSpecs.add(s);
                params.add(c.data());
                yield new Leaf(new Slot.Param(params.size() - 1));
            }
            case Tuple t -> {
                List<Value> fields = new ArrayList<>();
                for (Expr f : t.fields()) fields.add(value(f));
                yield new Tup(fields);
            }
            case TupleGetItem g -> {
                if (!(value(g.tuple()) instanceof Tup tup)) throw new GraphException("projection ." + g.index() + " of a non-tuple value");
                yield tup.fields().get(g.index());
            }
            case Let l -> {
                values.put(l.var(), value(l.value()));
                yield value(l.body());
            }
            case Function f -> {
                if (!f.isPrimitive()) throw new GraphException("a non-Primitive function literal in @main (closures are not supported by the graph executor): " + describe(f));
                yield new Fn(f);
            }
            case GlobalVar gv -> {
                Function f = module.function(gv.name()).orElseThrow(() -> new GraphException("unknown global @" + gv.name()));
                if (!f.isPrimitive()) throw new GraphException("call of @" + gv.name() + ": the graph executor only runs calls of Primitive (fused) functions");
                yield new Fn(f);
            }
            case Call c -> call(c);
            default -> throw new GraphException("the graph executor supports dataflow over fused kernels only, found " + e.getClass().getSimpleName() + ": " + describe(e));
        };
    }

    private Value call(Call c) {
        if (c.callee() instanceof Op op) {
            throw new GraphException("operator " + op.name() + " is called outside a fused Primitive function: compile the module after fuse-ops (-O1 or higher)");
        }
        if (!(value(c.callee()) instanceof Fn(Function f))) throw new GraphException("call of a non-function value: " + describe(c));
        List<Slot> args = new ArrayList<>();
        for (Expr a : c.args()) flatten(value(a), args);
        Type t = types.typeOf(c);
        List<TensorSpec> outs = flattenTypes(t, "the result of kernel " + KernelTable.baseName(f));
        List<TensorSpec> argSpecs = new ArrayList<>();
        for (Expr a : c.args()) argSpecs.addAll(flattenTypes(types.typeOf(a), "an argument of kernel " + KernelTable.baseName(f)));
        if (!outs.isEmpty() && (outs.stream().allMatch(o -> o.elementCount() == 0) || (!argSpecs.isEmpty() && argSpecs.stream().allMatch(a -> a.elementCount() == 0)))) {
            List<Slot> computed = dataFreeResults(f, argSpecs, outs);
            return t instanceof TupleType ? regroup(t, computed, new int[1]) : new Leaf(computed.getFirst());
        }
        int alias = sameBytesParam(f);
        if (alias >= 0 && argSpecs.size() == f.params().size() && !(t instanceof TupleType)) return new Leaf(args.get(alias));
        int kernel = kernels.indexOf(f);
        List<Slot> results = new ArrayList<>();
        for (int i = 0; i < outs.size(); i++) {
            TensorSpec o = outs.get(i);
            results.add(new Slot.Temp(temps.size()));
            temps.add(new TensorSpec(kernels.get(kernel).name() + (outs.size() > 1 ? "." + i : "") + "#" + temps.size(), o.shape(), o.dtype()));
        }
        steps.add(new Step.KernelCall(kernel, args, results));
        return t instanceof TupleType ? regroup(t, results, new int[1]) : new Leaf(results.getFirst());
    }

    /**
     * The results of a call that reads no data: every result is empty, or every argument is (a sum
     * over an empty axis is still a tensor of zeros). They do not depend on the run's inputs, so they
     * are computed now (the interpreter runs the fused function on empty arrays) and become
     * parameters; kernels, whose buffers have positive extents, never see an empty tensor. Values
     * computed further from such results (log-sum-exp adding back the max of an empty set) are
     * constants before fusion: the fold-empty pass computes them.
     */
    private List<Slot> dataFreeResults(Function f, List<TensorSpec> args, List<TensorSpec> outs) {
        List<NDArray> values = new ArrayList<>();
        if (outs.stream().allMatch(o -> o.elementCount() == 0)) {
            for (TensorSpec o : outs) values.add(NDArray.zeros(o.dtype(), o.shapeArray()));
        } else {
            NDArray[] empty = args.stream().map(a -> NDArray.zeros(a.dtype(), a.shapeArray())).toArray(NDArray[]::new);
            dev.relayfarm.interp.Value v = dev.relayfarm.interp.Interpreter.runMain(IRModule.fromMain(f), empty);
            flattenValue(v, values);
        }
        if (values.size() != outs.size()) throw new IllegalStateException("a fused call made " + values.size() + " values for " + outs.size() + " results");
        List<Slot> slots = new ArrayList<>();
        for (int i = 0; i < outs.size(); i++) {
            TensorSpec o = outs.get(i);
            paramSpecs.add(new TensorSpec("p" + params.size(), o.shape(), o.dtype()));
            params.add(values.get(i));
            slots.add(new Slot.Param(params.size() - 1));
        }
        return slots;
    }

    private static void flattenValue(dev.relayfarm.interp.Value v, List<NDArray> out) {
        switch (v) {
            case dev.relayfarm.interp.TensorValue tv -> out.add(tv.data());
            case dev.relayfarm.interp.TupleValue tv -> tv.fields().forEach(x -> flattenValue(x, out));
            case dev.relayfarm.interp.ClosureValue _, dev.relayfarm.interp.RefValue _, dev.relayfarm.interp.ConstructorValue _, dev.relayfarm.interp.FunctionRefValue _ ->
                    throw new GraphException("a fused function returned " + v.getClass().getSimpleName() + ", not tensors");
        }
    }

    /** Operators whose result is their (only) argument's bytes, read as another shape of the same row-major data. */
    private static final java.util.Set<String> SAME_BYTES = java.util.Set.of("reshape", "squeeze", "expand_dims", "nn.batch_flatten");

    /**
     * When {@code f}'s body is a chain of {@link #SAME_BYTES} operators over one of its parameters
     * (a flatten before a dense, a squeeze after a pool), the index of that parameter, else -1. Such a
     * call needs no kernel: its result is the argument's buffer (TVM's graph executor does the same
     * for reshape-only groups), so it costs neither a kernel launch nor a copy.
     */
    public static int sameBytesParam(Function f) {
        Expr e = f.body();
        while (e instanceof Call c && c.callee() instanceof Op op && SAME_BYTES.contains(op.name()) && c.args().size() == 1) e = c.args().getFirst();
        if (!(e instanceof Var v)) return -1;
        for (int i = 0; i < f.params().size(); i++) if (f.params().get(i) == v) return i;
        return -1;
    }


    private static Value regroup(Type t, List<Slot> flat, int[] next) {
        if (t instanceof TupleType tt) {
            List<Value> fields = new ArrayList<>();
            for (Type f : tt.fields()) fields.add(regroup(f, flat, next));
            return new Tup(fields);
        }
        return new Leaf(flat.get(next[0]++));
    }

    private static void flatten(Value v, List<Slot> out) {
        switch (v) {
            case Leaf l -> out.add(l.slot());
            case Tup t -> t.fields().forEach(f -> flatten(f, out));
            case Fn f -> throw new GraphException("a function value cannot be a kernel argument or a graph output (higher-order code is not supported)");
        }
    }

    private List<TensorSpec> flattenTypes(Type t, String what) {
        List<TensorSpec> out = new ArrayList<>();
        ArrayDeque<Type> stack = new ArrayDeque<>();
        stack.push(t);
        while (!stack.isEmpty()) {
            Type x = stack.pop();
            switch (x) {
                case TensorType tt -> out.add(spec("out" + out.size(), tt, what));
                case TupleType tt -> {
                    for (int i = tt.fields().size() - 1; i >= 0; i--) stack.push(tt.fields().get(i));
                }
                default -> throw new GraphException(what + " has type " + x + ": only tensors and tuples of tensors are supported");
            }
        }
        return out;
    }

    private static TensorSpec spec(String name, TensorType t, String what) {
        if (t.dtype().isString()) throw new GraphException(StringTensors.refusal(what + " is " + t));
        List<Integer> shape = new ArrayList<>();
        for (Dim d : t.shape()) {
            if (!(d instanceof Dim.Int(long v)) || v > Integer.MAX_VALUE) throw new GraphException(what + " has a dynamic shape " + t + ": compile with static shapes (a job's shapes field, or --shape NAME=1x3x224x224)");
            shape.add((int) v);
        }
        return new TensorSpec(name, shape, t.dtype());
    }

    /** Retargets kernel results that are graph outputs to the caller's buffers and renumbers the remaining temps. */
    private GraphPlan finish(List<Slot> result, List<TensorSpec> outTypes) {
        Map<Slot, Slot> subst = new HashMap<>();
        List<Step> copies = new ArrayList<>();
        List<TensorSpec> outputs = new ArrayList<>();
        for (int j = 0; j < result.size(); j++) {
            Slot s = result.get(j);
            TensorSpec t = outTypes.get(j);
            outputs.add(new TensorSpec("output" + j, t.shape(), t.dtype()));
            if (s instanceof Slot.Temp && !subst.containsKey(s)) {
                subst.put(s, new Slot.Output(j));
            } else {
                copies.add(new Step.Copy(subst.getOrDefault(s, s), new Slot.Output(j), t.byteSize()));
            }
        }
        Map<Integer, Integer> renumber = new LinkedHashMap<>();
        List<TensorSpec> kept = new ArrayList<>();
        for (int i = 0; i < temps.size(); i++) {
            if (!subst.containsKey(new Slot.Temp(i))) {
                renumber.put(i, kept.size());
                kept.add(temps.get(i));
            }
        }
        List<Step> out = new ArrayList<>();
        for (Step st : steps) {
            if (st instanceof Step.KernelCall k) {
                out.add(new Step.KernelCall(k.kernel(), k.args().stream().map(a -> map(a, subst, renumber)).toList(),
                        k.results().stream().map(a -> map(a, subst, renumber)).toList()));
            }
        }
        for (Step c : copies) {
            Step.Copy cp = (Step.Copy) c;
            out.add(new Step.Copy(map(cp.src(), subst, renumber), cp.dst(), cp.bytes()));
        }
        return new GraphPlan(inputs, outputs, kernels.kernels(), paramSpecs, params, kept, out);
    }

    private static Slot map(Slot s, Map<Slot, Slot> subst, Map<Integer, Integer> renumber) {
        Slot t = subst.get(s);
        if (t != null) return t;
        return s instanceof Slot.Temp(int id) ? new Slot.Temp(renumber.get(id)) : s;
    }

    /** A short description of a node (never the whole subtree: nodes can be huge) with its source position when parsed. */
    private static String describe(Expr e) {
        String what = switch (e) {
            case Call c -> "a call of " + (c.callee() instanceof Op op ? op.name() : c.callee().getClass().getSimpleName());
            case Var v -> "%" + v.name();
            default -> "a " + e.getClass().getSimpleName();
        };
        return what + (e.span() == null || e.span().equals(Span.NONE) ? "" : " at " + e.span());
    }
}
