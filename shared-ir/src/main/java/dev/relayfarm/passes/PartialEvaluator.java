package dev.relayfarm.passes;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import dev.relayfarm.passes.PartialValue.Dynamic;
import dev.relayfarm.passes.PartialValue.StaticAdt;
import dev.relayfarm.passes.PartialValue.StaticClosure;
import dev.relayfarm.passes.PartialValue.StaticConstructorFn;
import dev.relayfarm.passes.PartialValue.StaticGlobal;
import dev.relayfarm.passes.PartialValue.StaticOp;
import dev.relayfarm.passes.PartialValue.StaticRef;
import dev.relayfarm.passes.PartialValue.StaticTensor;
import dev.relayfarm.passes.PartialValue.StaticTuple;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The engine of {@link PartialEvaluate}: an interpreter over {@link PartialValue}s that runs what it
 * can at compile time and emits residual code (into {@link ResidualBlock}s) for the rest.
 *
 * <p><b>Machine.</b> Like the reference interpreter it is a loop over an explicit continuation stack,
 * not Java recursion: a 100,000-let chain, a deep dataflow nest and a loop unrolled a thousand times
 * (each unfolded call is a continuation) all run on the default stack. Java recursion happens only
 * where residual code gets a nested scope: the two branches of an {@code if} on a dynamic condition,
 * the clauses of a residual {@code match}, and the body of a function that must exist at run time;
 * each of these enters a deeper "dynamic depth", which bounds unfolding (below), so the recursion is
 * as deep as the program's own nesting.
 *
 * <p><b>Unfolding</b> (inlining a call of a known function and evaluating its body on the
 * arguments' partial values) is what unrolls loops. To terminate, a call of a function that is
 * already being unfolded (recursion) is unfolded again only when (a) some argument is static, (b)
 * no residual branch was entered since that function's innermost unfolding (so the recursion is
 * steered by static data: a loop whose exit test is dynamic stays a call), (c) its arguments' static
 * parts differ from every active unfolding of it (the memo that stops {@code f(1)} calling
 * {@code f(1)}), and (d) the fuel allows (at most {@code maxRecursiveUnfolds} nested unfoldings of
 * one function, {@code maxUnfolds} in all per global). A recursive function called with only
 * dynamic arguments is not unfolded at all: peeling one iteration gains nothing.
 *
 * <p>Semantics follow the interpreter: call-by-value, left to right, a node shared within one
 * function body evaluated once per activation. Each global is evaluated on its own with dynamic
 * parameters; primitive (fused) functions are called, never unfolded.
 */
final class PartialEvaluator {
    private final IRModule module;
    private final PartialEvaluate.Options options;
    private final Interpreter kernels;
    private final Map<GlobalVar, Boolean> recursiveGlobals = new java.util.HashMap<>();
    private final Map<Function, Boolean> recursiveClosures = new IdentityHashMap<>();

    // ---------------------------------------------------------------- per-global state
    private ResidualBlock block;
    private StaticStore store;
    /** The unfoldings and residual function bodies under way, innermost last. */
    private final ArrayList<Activation> active = new ArrayList<>();
    /** How many residual scopes (branches, clauses, function bodies) enclose the current point. */
    private int dynamicDepth;
    private int unfolds;
    /** Residual code emitted for static values, valid while the block it went into is open. */
    private final IdentityHashMap<PartialValue, Reified> reified = new IdentityHashMap<>();
    /** Type variables bound by the residual functions enclosing the current point. */
    private final Set<TypeVar> typeVarsInScope = new HashSet<>();
    /** Primitive functions already placed in residual code as they are (a node is placed once). */
    private final Set<Function> emittedPrimitives = java.util.Collections.newSetFromMap(new IdentityHashMap<>());

    private record Reified(Expr atom, ResidualBlock block) {}

    /** A function being unfolded or residualized: its identity, the arguments, the dynamic depth it began at. */
    private record Activation(Object function, List<PartialValue> args, int dynamicDepth) {}

    PartialEvaluator(IRModule module, PartialEvaluate.Options options) {
        this.module = module;
        this.options = options;
        // Bounded like fold-constant's evaluations: an operator call on constants that would
        // allocate past the budget (zeros of a huge shape) stays residual instead of exhausting memory.
        this.kernels = new Interpreter(module, FoldConstant.budget(FoldConstant.Options.DEFAULT));
    }

    /**
     * One activation's variables (parameters, lets, pattern variables: a variable is bound once per
     * activation, so one identity map suffices, as in the interpreter), linked to the frame the
     * function was created in, plus the memo of nodes already evaluated in it (undone when a residual
     * branch ends, as the other branch has not evaluated them).
     */
    static final class Frame {
        private final Frame parent;
        private final IdentityHashMap<Var, PartialValue> vars = new IdentityHashMap<>();
        private final IdentityHashMap<Expr, PartialValue> memo = new IdentityHashMap<>();
        private final ArrayList<Expr> memoLog = new ArrayList<>();

        Frame(Frame parent) {
            this.parent = parent;
        }

        PartialValue find(Var v) {
            for (Frame f = this; f != null; f = f.parent) {
                PartialValue p = f.vars.get(v);
                if (p != null) return p;
            }
            return null;
        }

        void bind(Var v, PartialValue p) {
            vars.put(v, p);
        }

        void memoize(Expr node, PartialValue p) {
            if (memo.put(node, p) == null) memoLog.add(node);
        }

        int memoMark() {
            return memoLog.size();
        }

        void rollback(int mark) {
            while (memoLog.size() > mark) memo.remove(memoLog.remove(memoLog.size() - 1));
        }
    }

    // ---------------------------------------------------------------- entry

    /** {@code f} (global {@code global}) evaluated with dynamic parameters: its residual function. */
    Function evaluateGlobal(GlobalVar global, Function f) {
        block = new ResidualBlock();
        store = new StaticStore();
        active.clear();
        reified.clear();
        typeVarsInScope.clear();
        typeVarsInScope.addAll(f.typeParams());
        emittedPrimitives.clear();
        dynamicDepth = 0;
        unfolds = 0;
        Frame frame = new Frame(null);
        List<PartialValue> args = new ArrayList<>();
        for (Var p : f.params()) {
            Dynamic d = new Dynamic(p);
            frame.bind(p, d);
            args.add(d);
        }
        active.add(new Activation(global, args, 0));
        PartialValue result = new Machine(f.body(), frame).run();
        Expr body = block.close(reify(result));
        active.clear();
        return f.withBody(body);
    }

    // ---------------------------------------------------------------- continuations

    private sealed interface Kont {}

    private record Memoize(Expr node, Frame frame) implements Kont {}

    private record BindLet(Let let, Frame frame) implements Kont {}

    private record Branch(If node, Frame frame) implements Kont {}

    private record Project(TupleGetItem node) implements Kont {}

    private record Select(Match node, Frame frame) implements Kont {}

    private record NewRef() implements Kont {}

    private record ReadRef() implements Kont {}

    /** The end of an unfolded call: its activation is no longer under way. */
    private record Return() implements Kont {}

    private static final class GatherWrite implements Kont {
        final RefWrite node;
        final Frame frame;
        PartialValue ref;

        GatherWrite(RefWrite node, Frame frame) {
            this.node = node;
            this.frame = frame;
        }
    }

    private static final class GatherTuple implements Kont {
        final Tuple node;
        final Frame frame;
        final PartialValue[] values;
        int next = 1;

        GatherTuple(Tuple node, Frame frame) {
            this.node = node;
            this.frame = frame;
            this.values = new PartialValue[node.fields().size()];
        }
    }

    private static final class GatherCall implements Kont {
        final Call node;
        final Frame frame;
        final PartialValue[] args;
        PartialValue callee;
        int next;

        GatherCall(Call node, Frame frame, PartialValue callee) {
            this.node = node;
            this.frame = frame;
            this.callee = callee;
            this.args = new PartialValue[node.args().size()];
        }
    }

    // ---------------------------------------------------------------- the machine

    /** Evaluates one expression in one frame to its partial value, emitting into the current block. */
    private final class Machine {
        private Expr control;
        private Frame frame;
        private PartialValue value;
        private final ArrayList<Kont> stack = new ArrayList<>();

        Machine(Expr control, Frame frame) {
            this.control = control;
            this.frame = frame;
        }

        PartialValue run() {
            while (true) {
                if (control != null) {
                    Expr e = control;
                    control = null;
                    step(e);
                } else {
                    int top = stack.size() - 1;
                    if (top < 0) return value;
                    resume(stack.get(top), top);
                }
            }
        }

        private void push(Kont k) {
            stack.add(k);
        }

        private void step(Expr e) {
            boolean memoizable = switch (e) {
                case Call c -> true;
                case Tuple t -> !t.fields().isEmpty();
                case TupleGetItem t -> true;
                case If i -> true;
                case Match m -> true;
                case RefCreate r -> true;
                case RefRead r -> true;
                case RefWrite r -> true;
                default -> false;
            };
            if (memoizable) {
                PartialValue known = frame.memo.get(e);
                if (known != null) {
                    value = known;
                    return;
                }
                push(new Memoize(e, frame));
            }
            switch (e) {
                case Var v -> {
                    PartialValue found = frame.find(v);
                    if (found == null) throw new IllegalStateException("partial-evaluate: unbound variable " + v);
                    value = found;
                }
                case GlobalVar g -> value = new StaticGlobal(g);
                case Constant c -> value = new StaticTensor(c.data(), c);
                case Op o -> value = new StaticOp(o);
                case Constructor c -> value = c.inputs().isEmpty() ? new StaticAdt(c, List.of()) : new StaticConstructorFn(c);
                case Function f -> value = new StaticClosure(f, frame, null);
                case Tuple t -> {
                    if (t.fields().isEmpty()) {
                        value = new StaticTuple(List.of());
                    } else {
                        push(new GatherTuple(t, frame));
                        control = t.fields().get(0);
                    }
                }
                case TupleGetItem t -> {
                    push(new Project(t));
                    control = t.tuple();
                }
                case Let l -> {
                    if (l.value() instanceof Function f) {
                        // A let-bound function sees itself (recursion): bind before the body.
                        frame.bind(l.var(), new StaticClosure(f, frame, l.var()));
                        control = l.body();
                    } else {
                        push(new BindLet(l, frame));
                        control = l.value();
                    }
                }
                case If i -> {
                    push(new Branch(i, frame));
                    control = i.cond();
                }
                case Call c -> {
                    Expr callee = c.callee();
                    PartialValue known = switch (callee) {
                        case Op o -> new StaticOp(o);
                        case GlobalVar g -> new StaticGlobal(g);
                        case Constructor k -> new StaticConstructorFn(k);
                        default -> null;
                    };
                    GatherCall k = new GatherCall(c, frame, known);
                    push(k);
                    if (known == null) {
                        control = callee;
                    } else if (c.args().isEmpty()) {
                        value = known;
                        k.next = -1; // the callee arrives as the value; nothing else to gather
                    } else {
                        control = c.args().get(0);
                    }
                }
                case Match m -> {
                    push(new Select(m, frame));
                    control = m.data();
                }
                case RefCreate r -> {
                    push(new NewRef());
                    control = r.value();
                }
                case RefRead r -> {
                    push(new ReadRef());
                    control = r.ref();
                }
                case RefWrite r -> {
                    push(new GatherWrite(r, frame));
                    control = r.ref();
                }
            }
        }

        private void resume(Kont k, int top) {
            switch (k) {
                case Memoize m -> {
                    stack.remove(top);
                    m.frame().memoize(m.node(), value);
                }
                case BindLet b -> {
                    stack.remove(top);
                    frame = b.frame();
                    frame.bind(b.let().var(), value);
                    control = b.let().body();
                }
                case Branch b -> {
                    stack.remove(top);
                    frame = b.frame();
                    if (value instanceof StaticTensor(NDArray c, Constant unused) && c.dtype().equals(DType.BOOL) && c.size() == 1) {
                        control = c.getBoolean(0) ? b.node().thenBranch() : b.node().elseBranch();
                    } else {
                        value = residualIf(b.node(), reify(value), frame);
                    }
                }
                case Project p -> {
                    stack.remove(top);
                    value = project(value, p.node().index());
                }
                case Select s -> {
                    stack.remove(top);
                    frame = s.frame();
                    Expr body = selectStatically(s.node(), value, frame);
                    if (body != null) control = body;
                    else value = residualMatch(s.node(), value, frame);
                }
                case NewRef n -> {
                    stack.remove(top);
                    Var cell = block.emit(new RefCreate(reify(value)));
                    StaticRef ref = new StaticRef(cell);
                    store.put(ref, value);
                    value = ref;
                }
                case ReadRef r -> {
                    stack.remove(top);
                    value = readRef(value);
                }
                case GatherWrite w -> {
                    if (w.ref == null) {
                        w.ref = value;
                        frame = w.frame;
                        control = w.node.value();
                    } else {
                        stack.remove(top);
                        value = writeRef(w.ref, value);
                    }
                }
                case GatherTuple g -> {
                    g.values[g.next - 1] = value;
                    if (g.next < g.values.length) {
                        frame = g.frame;
                        control = g.node.fields().get(g.next++);
                    } else {
                        stack.remove(top);
                        value = new StaticTuple(List.of(g.values));
                    }
                }
                case GatherCall g -> {
                    if (g.next == -1) {
                        g.next = 0; // a named callee with no arguments
                    } else if (g.callee == null) {
                        g.callee = value;
                    } else {
                        g.args[g.next++] = value;
                    }
                    if (g.next < g.args.length) {
                        frame = g.frame;
                        control = g.node.args().get(g.next);
                    } else {
                        stack.remove(top);
                        apply(g.callee, List.of(g.args), g.node);
                    }
                }
                case Return r -> {
                    stack.remove(top);
                    active.remove(active.size() - 1);
                }
            }
        }

        /** Calls {@code callee}: sets {@code value}, or sets up the unfolding of its body. */
        private void apply(PartialValue callee, List<PartialValue> args, Call site) {
            switch (callee) {
                case StaticOp o -> value = callOp(o.op(), args, site);
                case StaticConstructorFn c -> value = new StaticAdt(c.constructor(), args);
                case StaticGlobal g -> {
                    Function f = module.lookup(g.global());
                    callFunction(g.global(), f, null, callee, args, site);
                }
                case StaticClosure c -> callFunction(c.function(), c.function(), c.env(), callee, args, site);
                case Dynamic d -> value = residualCall(callee, args, site, true);
                case StaticTensor t -> throw notCallable(callee);
                case StaticTuple t -> throw notCallable(callee);
                case StaticAdt a -> throw notCallable(callee);
                case StaticRef r -> throw notCallable(callee);
            }
        }

        private void callFunction(Object key, Function f, Frame env, PartialValue callee, List<PartialValue> args, Call site) {
            if (f.isPrimitive() || f.params().size() != args.size()) {
                // A fused kernel computes tensors only: calling it leaves the store as it is.
                value = residualCall(callee, args, site, !f.isPrimitive());
                return;
            }
            if (!shouldUnfold(key, f, callee, args)) {
                value = residualCall(callee, args, site, true);
                return;
            }
            unfolds++;
            Frame callFrame = new Frame(env);
            for (int i = 0; i < args.size(); i++) callFrame.bind(f.params().get(i), args.get(i));
            active.add(new Activation(key, args, dynamicDepth));
            push(new Return());
            frame = callFrame;
            control = f.body();
        }
    }

    private static IllegalStateException notCallable(PartialValue v) {
        return new IllegalStateException("partial-evaluate: calling a non-function value " + v.getClass().getSimpleName());
    }

    // ---------------------------------------------------------------- unfolding policy

    private boolean shouldUnfold(Object key, Function f, PartialValue callee, List<PartialValue> args) {
        if (unfolds >= options.maxUnfolds() || dynamicDepth > options.maxDynamicDepth()) return false;
        boolean someStatic = args.stream().anyMatch(a -> !(a instanceof Dynamic));
        Activation innermost = null;
        int count = 0;
        for (Activation a : active) {
            if (a.function() == key || a.function().equals(key)) {
                count++;
                innermost = a;
            }
        }
        if (count == 0) return someStatic || !isRecursive(key, f, callee);
        if (!someStatic || dynamicDepth > innermost.dynamicDepth() || count >= options.maxRecursiveUnfolds()) return false;
        for (Activation a : active) {
            if ((a.function() == key || a.function().equals(key)) && sameStaticParts(a.args(), args)) return false;
        }
        return true;
    }

    private boolean isRecursive(Object key, Function f, PartialValue callee) {
        if (key instanceof GlobalVar g) return recursiveGlobals.computeIfAbsent(g, this::reachesItself);
        if (!(callee instanceof StaticClosure c) || c.name() == null) return false;
        return recursiveClosures.computeIfAbsent(f, fn -> ExprTraversal.postOrder(fn.body()).contains(c.name()));
    }

    /** Whether {@code g}'s body reaches {@code g} again through global references. */
    private boolean reachesItself(GlobalVar g) {
        Set<GlobalVar> seen = new HashSet<>();
        ArrayDeque<GlobalVar> work = new ArrayDeque<>();
        work.add(g);
        while (!work.isEmpty()) {
            Function f = module.functions().get(work.poll());
            if (f == null) continue;
            for (Expr e : ExprTraversal.postOrder(f.body())) {
                if (e instanceof GlobalVar r) {
                    if (r.equals(g)) return true;
                    if (seen.add(r)) work.add(r);
                }
            }
        }
        return false;
    }

    /** Whether two argument lists are known to the same extent and agree where known (iterative). */
    private static boolean sameStaticParts(List<PartialValue> a, List<PartialValue> b) {
        ArrayDeque<PartialValue[]> work = new ArrayDeque<>();
        for (int i = 0; i < a.size(); i++) work.push(new PartialValue[] {a.get(i), b.get(i)});
        while (!work.isEmpty()) {
            PartialValue[] pair = work.pop();
            PartialValue x = pair[0];
            PartialValue y = pair[1];
            if (x == y) continue;
            boolean same = switch (x) {
                case Dynamic d -> y instanceof Dynamic;
                case StaticTensor t -> y instanceof StaticTensor u && t.data().dtype().equals(u.data().dtype())
                        && java.util.Arrays.equals(t.data().shape(), u.data().shape()) && t.data().contentEquals(u.data());
                case StaticTuple t -> y instanceof StaticTuple u && t.fields().size() == u.fields().size() && pushAll(work, t.fields(), u.fields());
                case StaticAdt t -> y instanceof StaticAdt u && t.constructor().equals(u.constructor())
                        && t.fields().size() == u.fields().size() && pushAll(work, t.fields(), u.fields());
                case StaticClosure c -> y instanceof StaticClosure d && c.function() == d.function();
                case StaticGlobal g -> y instanceof StaticGlobal h && g.global().equals(h.global());
                case StaticOp o -> y instanceof StaticOp p && o.op().equals(p.op());
                case StaticConstructorFn c -> y instanceof StaticConstructorFn d && c.constructor().equals(d.constructor());
                case StaticRef r -> false;
            };
            if (!same) return false;
        }
        return true;
    }

    private static boolean pushAll(ArrayDeque<PartialValue[]> work, List<PartialValue> a, List<PartialValue> b) {
        for (int i = 0; i < a.size(); i++) work.push(new PartialValue[] {a.get(i), b.get(i)});
        return true;
    }

    // ---------------------------------------------------------------- operators and residual calls

    /** An operator call: run by its kernel when every argument is constant data, else residual. */
    private PartialValue callOp(Op op, List<PartialValue> args, Call site) {
        if (args.stream().allMatch(PartialValue::isConstantData)) {
            List<Expr> constants = new ArrayList<>(args.size());
            for (PartialValue a : args) constants.add(constantExpr(a));
            try {
                Value v = kernels.evaluate(new Call(op, constants, site.attrs(), site.typeArgs(), site.span()));
                return fromValue(v);
            } catch (RuntimeException e) {
                // A kernel that fails here (an index out of range in a branch never taken, say) is
                // left for run time, where it fails only if that code runs.
            }
        }
        List<Expr> atoms = reifyAll(args);
        return new Dynamic(block.emit(new Call(op, atoms, site.attrs(), site.typeArgs(), site.span())));
    }

    private static Expr constantExpr(PartialValue v) {
        return switch (v) {
            case StaticTensor t -> t.constant();
            case StaticTuple t -> new Tuple(t.fields().stream().map(PartialEvaluator::constantExpr).toList());
            default -> throw new IllegalStateException("not constant data: " + v);
        };
    }

    private static PartialValue fromValue(Value v) {
        return switch (v) {
            case TensorValue(NDArray a) -> new StaticTensor(a);
            case TupleValue t -> new StaticTuple(t.fields().stream().map(PartialEvaluator::fromValue).toList());
            default -> throw new IllegalStateException("operator returned " + Value.describe(v));
        };
    }

    /** A call left for run time; one with {@code effects} may write any cell it reaches. */
    private PartialValue residualCall(PartialValue callee, List<PartialValue> args, Call site, boolean effects) {
        Expr fn = reify(callee);
        List<Expr> atoms = reifyAll(args);
        Var result = block.emit(new Call(fn, atoms, site.attrs(), site.typeArgs(), site.span()));
        if (effects) store.clear();
        return new Dynamic(result);
    }

    // ---------------------------------------------------------------- tuples and references

    private PartialValue project(PartialValue tuple, int index) {
        return switch (tuple) {
            case StaticTuple t -> t.fields().get(index);
            case Dynamic d -> new Dynamic(block.emit(new TupleGetItem(d.atom(), index)));
            default -> throw new IllegalStateException("partial-evaluate: projection ." + index + " of " + tuple.getClass().getSimpleName());
        };
    }

    private PartialValue readRef(PartialValue ref) {
        if (ref instanceof StaticRef r) {
            PartialValue known = store.get(r);
            if (known != null) return known;
        }
        Dynamic read = new Dynamic(block.emit(new RefRead(reify(ref))));
        // Until something may write it, the cell holds what was just read.
        if (ref instanceof StaticRef r) store.put(r, read);
        return read;
    }

    private PartialValue writeRef(PartialValue ref, PartialValue v) {
        Var done = block.emit(new RefWrite(reify(ref), reify(v)));
        if (ref instanceof StaticRef r) store.put(r, v);
        else store.clear(); // it may be any cell
        // The unit result as the write itself, so a write ending a scope stays its result.
        return new Dynamic(done);
    }

    // ---------------------------------------------------------------- residual control flow

    /** Evaluates {@code e} in a new residual scope (one level deeper) and closes it. */
    private Expr residualize(Expr e, Frame frame) {
        ResidualBlock outer = block;
        block = new ResidualBlock();
        dynamicDepth++;
        try {
            PartialValue result = new Machine(e, frame).run();
            return block.close(reify(result));
        } finally {
            block = outer;
            dynamicDepth--;
        }
    }

    private PartialValue residualIf(If node, Expr cond, Frame frame) {
        StaticStore before = store;
        List<StaticStore> after = new ArrayList<>(2);
        Expr[] branches = new Expr[2];
        Expr[] sources = {node.thenBranch(), node.elseBranch()};
        for (int i = 0; i < 2; i++) {
            store = before.copy();
            int mark = frame.memoMark();
            branches[i] = residualize(sources[i], frame);
            frame.rollback(mark);
            after.add(store);
        }
        store = StaticStore.join(after);
        return new Dynamic(block.emit(new If(cond, branches[0], branches[1], node.span())));
    }

    private enum Outcome { MATCHES, FAILS, UNKNOWN }

    /** The body of the clause that statically matches {@code data} (its variables bound), or null. */
    private Expr selectStatically(Match m, PartialValue data, Frame frame) {
        List<Var> vars = new ArrayList<>();
        List<PartialValue> values = new ArrayList<>();
        for (Clause cl : m.clauses()) {
            vars.clear();
            values.clear();
            switch (matchPattern(cl.pattern(), data, vars, values)) {
                case MATCHES -> {
                    for (int i = 0; i < vars.size(); i++) frame.bind(vars.get(i), values.get(i));
                    return cl.body();
                }
                case FAILS -> {}
                case UNKNOWN -> {
                    return null;
                }
            }
        }
        return null; // no clause matches: the run-time error is kept
    }

    /** Patterns nest as deep as the program text writes them, so recursion is fine here. */
    private Outcome matchPattern(Pattern p, PartialValue v, List<Var> vars, List<PartialValue> values) {
        return switch (p) {
            case Pattern.Wildcard w -> Outcome.MATCHES;
            case Pattern.Bind b -> {
                vars.add(b.var());
                values.add(v);
                yield Outcome.MATCHES;
            }
            case Pattern.Ctor c -> {
                if (!(v instanceof StaticAdt a)) yield Outcome.UNKNOWN;
                if (!a.constructor().equals(c.constructor()) || a.fields().size() != c.args().size()) yield Outcome.FAILS;
                yield matchAll(c.args(), a.fields(), vars, values);
            }
            case Pattern.TuplePattern t -> {
                List<PartialValue> fields;
                if (v instanceof StaticTuple s) {
                    fields = s.fields();
                } else if (v instanceof Dynamic d) {
                    fields = new ArrayList<>();
                    for (int i = 0; i < t.fields().size(); i++) fields.add(new Dynamic(block.emit(new TupleGetItem(d.atom(), i))));
                } else {
                    yield Outcome.FAILS;
                }
                if (fields.size() != t.fields().size()) yield Outcome.FAILS;
                yield matchAll(t.fields(), fields, vars, values);
            }
        };
    }

    private Outcome matchAll(List<Pattern> patterns, List<PartialValue> fields, List<Var> vars, List<PartialValue> values) {
        Outcome out = Outcome.MATCHES;
        for (int i = 0; i < patterns.size(); i++) {
            Outcome o = matchPattern(patterns.get(i), fields.get(i), vars, values);
            if (o == Outcome.FAILS) return Outcome.FAILS;
            if (o == Outcome.UNKNOWN) out = Outcome.UNKNOWN;
        }
        return out;
    }

    private PartialValue residualMatch(Match m, PartialValue data, Frame frame) {
        Expr atom = reify(data);
        StaticStore before = store;
        List<StaticStore> after = new ArrayList<>();
        List<Clause> clauses = new ArrayList<>();
        for (Clause cl : m.clauses()) {
            store = before.copy();
            int mark = frame.memoMark();
            Pattern fresh = freshen(cl.pattern(), frame);
            clauses.add(new Clause(fresh, residualize(cl.body(), frame)));
            frame.rollback(mark);
            after.add(store);
        }
        store = after.isEmpty() ? before : StaticStore.join(after);
        return new Dynamic(block.emit(new Match(atom, clauses, m.complete(), m.span())));
    }

    /** The pattern with fresh variables, each bound in {@code frame} to itself as a dynamic value. */
    private Pattern freshen(Pattern p, Frame frame) {
        return switch (p) {
            case Pattern.Wildcard w -> w;
            case Pattern.Bind b -> {
                Var v = Var.fresh(b.var().name(), inScope(b.var().annotation()), b.var().span());
                frame.bind(b.var(), new Dynamic(v));
                yield new Pattern.Bind(v);
            }
            case Pattern.Ctor c -> new Pattern.Ctor(c.constructor(), c.args().stream().map(a -> freshen(a, frame)).toList());
            case Pattern.TuplePattern t -> new Pattern.TuplePattern(t.fields().stream().map(a -> freshen(a, frame)).toList());
        };
    }

    // ---------------------------------------------------------------- residual code for static values

    private List<Expr> reifyAll(List<PartialValue> values) {
        List<Expr> out = new ArrayList<>(values.size());
        for (PartialValue v : values) out.add(reify(v));
        return out;
    }

    /**
     * An atom computing {@code v} at the current point: emits (and remembers, while its scope is
     * open) the code building a static tuple, ADT value or closure. Iterative over nested values,
     * so a long static list does not recurse.
     */
    private Expr reify(PartialValue root) {
        Expr quick = atomFor(root);
        if (quick != null) return quick;
        ArrayDeque<PartialValue> work = new ArrayDeque<>();
        work.push(root);
        while (!work.isEmpty()) {
            PartialValue top = work.peek();
            if (atomFor(top) != null) {
                work.pop();
                continue;
            }
            List<PartialValue> fields = switch (top) {
                case StaticTuple t -> t.fields();
                case StaticAdt a -> a.fields();
                default -> List.of();
            };
            boolean ready = true;
            for (PartialValue f : fields) {
                if (atomFor(f) == null) {
                    work.push(f);
                    ready = false;
                }
            }
            if (!ready) continue;
            work.pop();
            List<Expr> atoms = new ArrayList<>(fields.size());
            for (PartialValue f : fields) atoms.add(atomFor(f));
            switch (top) {
                case StaticTuple t -> reified.put(top, new Reified(block.emit(new Tuple(atoms)), block));
                case StaticAdt a -> reified.put(top, new Reified(block.emit(new Call(a.constructor(), atoms)), block));
                case StaticClosure c -> residualClosure(c);
                default -> throw new IllegalStateException("no residual code for " + top);
            }
        }
        return atomFor(root);
    }

    /** The atom of a value that needs no code, or the code emitted for it in a scope still open. */
    private Expr atomFor(PartialValue v) {
        return switch (v) {
            case Dynamic d -> d.atom();
            case StaticTensor t -> t.constant();
            case StaticGlobal g -> g.global();
            case StaticOp o -> o.op();
            case StaticConstructorFn c -> c.constructor();
            case StaticRef r -> r.var();
            case StaticTuple t when t.fields().isEmpty() -> new Tuple(List.of());
            case StaticAdt a when a.fields().isEmpty() -> a.constructor();
            default -> {
                Reified r = reified.get(v);
                yield r != null && r.block().isOpen() ? r.atom() : null;
            }
        };
    }

    /**
     * Emits {@code let %f = fn (...) { body evaluated with dynamic parameters }}. The body may run at
     * any time, so it starts from an empty store. The variable is remembered before the body is
     * evaluated: a recursive function refers to itself through it (a let-bound function is in scope
     * in its own body).
     */
    private void residualClosure(StaticClosure c) {
        Function f = c.function();
        ResidualBlock outer = block;
        if (f.isPrimitive() && emittedPrimitives.add(f)) {
            // A fused kernel (closed, tensors only) goes out as it came in, the first time.
            Var name = outer.emit(Var.fresh(c.name() == null ? "f" : c.name().name()), f);
            reified.put(c, new Reified(name, outer));
            return;
        }
        Var name = Var.fresh(c.name() == null ? "f" : c.name().name());
        reified.put(c, new Reified(name, outer));
        List<Var> params = new ArrayList<>();
        Frame frame = new Frame(c.env());
        List<PartialValue> args = new ArrayList<>();
        Set<TypeVar> addedTypeVars = new HashSet<>(f.typeParams());
        addedTypeVars.removeAll(typeVarsInScope);
        typeVarsInScope.addAll(addedTypeVars);
        for (Var p : f.params()) {
            Var q = Var.fresh(p.name(), inScope(p.annotation()), p.span());
            params.add(q);
            Dynamic d = new Dynamic(q);
            frame.bind(p, d);
            args.add(d);
        }
        StaticStore saved = store;
        store = new StaticStore();
        active.add(new Activation(f, args, dynamicDepth + 1));
        Expr body;
        try {
            body = residualize(f.body(), frame);
        } finally {
            active.remove(active.size() - 1);
            store = saved;
        }
        Type ret = inScope(f.retType());
        typeVarsInScope.removeAll(addedTypeVars);
        outer.emit(name, new Function(params, body, ret, f.typeParams(), f.attrs(), f.span()));
    }

    /**
     * {@code t}, or {@code null} (no annotation: inference finds it) when it mentions a type variable
     * not bound where the residual code lands, as happens when a polymorphic global is unfolded into
     * another function.
     */
    private Type inScope(Type t) {
        if (t == null) return null;
        Set<TypeVar> boundInside = new HashSet<>();
        ArrayDeque<Type> work = new ArrayDeque<>();
        work.push(t);
        while (!work.isEmpty()) {
            switch (work.pop()) {
                case TypeVar v -> {
                    if (!typeVarsInScope.contains(v) && !boundInside.contains(v)) return null;
                }
                case TensorType tt -> {}
                case TupleType tt -> tt.fields().forEach(work::push);
                case FuncType ft -> {
                    boundInside.addAll(ft.typeParams()); // bound inside the function type itself
                    ft.argTypes().forEach(work::push);
                    work.push(ft.retType());
                }
                case TypeCall tc -> {
                    work.push(tc.func());
                    tc.args().forEach(work::push);
                }
                case RefType r -> work.push(r.value());
                case GlobalTypeVar g -> {}
                case IncompleteType i -> {
                    return null;
                }
            }
        }
        return t;
    }
}
