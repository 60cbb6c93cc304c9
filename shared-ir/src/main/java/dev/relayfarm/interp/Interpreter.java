package dev.relayfarm.interp;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
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
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reference interpreter: evaluates Relay expressions and module functions directly on
 * {@link NDArray}s, running each operator's reference kernel. It is the numerical oracle that
 * compiled code is checked against, so it favours clarity and robustness over speed.
 *
 * <p><b>Machine.</b> Evaluation is a CEK-style loop with an explicit continuation stack on the heap
 * instead of Java recursion: a 100,000-let chain, a 100,000-deep nested dataflow call and a program
 * recursing 10,000 deep all run on the default JVM stack. Calls in tail position (a let body, a
 * branch, a clause body, a function body) push nothing, so let chains and tail recursion run in
 * constant continuation space.
 *
 * <p><b>Semantics.</b> Call-by-value, callee then arguments left to right (the order of
 * {@link Expr#children()}). A sub-expression shared within one function body (a DAG) is evaluated
 * once per activation of that body ({@link SharedNodes}). Operator calls pass tuple arguments
 * flattened to their fields and wrap multi-array (or tuple-typed) results in a {@link TupleValue};
 * attributes are parsed once per call node (once per operator for calls without attributes).
 *
 * <p><b>Budgets.</b> Every evaluation runs under {@link InterpreterOptions} (steps, optional
 * wall-clock timeout, continuation-stack depth, bytes of one operator result) and stops when the
 * thread is interrupted, with an {@link InterpreterException} naming the budget: endless loops and
 * runaway recursion end in seconds instead of running forever or exhausting the heap.
 *
 * <p><b>Not done here:</b> type checking (beyond checking the arguments of the entry function
 * against its annotations) and any form of compilation; run type inference first for typed errors.
 *
 * <p>An instance caches per-node preparation (parsed operator attributes, shared-node analysis) and
 * is not thread-safe; use one per thread.
 */
public final class Interpreter {
    private final IRModule module;
    private final java.util.function.Function<String, OpDef<?>> ops;
    /** Prepared calls with attributes, by call node. */
    private final Map<Call, PreparedOp> preparedCalls = new IdentityHashMap<>();
    /**
     * Prepared calls without attributes (nearly all in real models), by operator name: a small map
     * that stays in cache, where a per-node map of a 100,000-node graph would miss on every lookup.
     */
    private final Map<String, PreparedOp> preparedPlain = new HashMap<>();
    private final Map<Expr, SharedNodes.BodyInfo> bodies = new IdentityHashMap<>();
    private final InterpreterOptions options;

    /** An interpreter for {@code module} running the operators of {@link OpRegistry}. */
    public Interpreter(IRModule module) {
        this(module, OpRegistry::get);
    }

    /** An interpreter for {@code module} with the given budgets. */
    public Interpreter(IRModule module, InterpreterOptions options) {
        this(module, OpRegistry::get, options);
    }

    /**
     * An interpreter resolving operator names with {@code ops} (tests inject small operators here);
     * the resolver throws for unknown names.
     */
    public Interpreter(IRModule module, java.util.function.Function<String, OpDef<?>> ops) {
        this(module, ops, InterpreterOptions.DEFAULT);
    }

    public Interpreter(IRModule module, java.util.function.Function<String, OpDef<?>> ops, InterpreterOptions options) {
        this.module = module;
        this.ops = ops;
        this.options = java.util.Objects.requireNonNull(options, "options");
    }

    // ---------------------------------------------------------------- public entry points

    /** Runs global {@code global} of {@code module} on {@code args}. */
    public static Value run(IRModule module, String global, List<Value> args) {
        return new Interpreter(module).call(global, args);
    }

    /** Runs global {@code global} of {@code module} on tensors. */
    public static Value run(IRModule module, String global, NDArray... args) {
        return new Interpreter(module).call(global, tensors(args));
    }

    /** Runs {@code @main} of {@code module} on tensors. */
    public static Value runMain(IRModule module, NDArray... args) {
        return run(module, "main", args);
    }

    /** Evaluates a closed expression (no free variables; no globals). */
    public static Value eval(Expr expr) {
        return new Interpreter(IRModule.EMPTY).evaluate(expr);
    }

    /**
     * Calls global {@code global} on {@code args}, first checking the argument count and each
     * argument against its parameter's annotation (shape and dtype of tensors), so a wrong input is
     * reported as "@main parameter %x expects Tensor[(1, 3), float32], got Tensor[(2, 3), float32]"
     * rather than as a kernel failure deep inside the program.
     */
    public Value call(String global, List<Value> args) {
        GlobalVar gv = new GlobalVar(global);
        Function fn = module.functions().get(gv);
        if (fn == null) {
            throw new InterpreterException("no global function @" + global + " in the module (it has " + module.functions().keySet() + ")", Span.NONE);
        }
        checkEntryArguments(global, fn, args);
        return apply(new FunctionRefValue(gv), args);
    }

    /** Calls global {@code global} on tensors. */
    public Value call(String global, NDArray... args) {
        return call(global, tensors(args));
    }

    /** Evaluates {@code expr}, which may refer to this interpreter's module but has no free variables. */
    public Value evaluate(Expr expr) {
        Machine m = new Machine();
        m.control = expr;
        m.frame = new Environment(null, bodyInfo(expr), 0);
        return m.run();
    }

    /** Applies a function value (closure, global, constructor or operator) to arguments. */
    public Value apply(Value fn, List<Value> args) {
        Machine m = new Machine();
        m.enter(fn, args.toArray(new Value[0]), null);
        return m.run();
    }

    private static List<Value> tensors(NDArray... args) {
        List<Value> out = new ArrayList<>(args.length);
        for (NDArray a : args) out.add(new TensorValue(a));
        return out;
    }

    // ---------------------------------------------------------------- continuations

    /**
     * What to do with the value just computed. Frames that gather several values are mutable and stay
     * on the stack while they fill, which avoids allocating one continuation per argument.
     */
    private sealed interface Kont {}

    /** Store the value in the frame's memo of shared nodes, then pass it on. */
    private record Memoize(Expr node, Environment frame) implements Kont {}

    /** Bind the let variable, then evaluate the body in the same frame (tail position). */
    private record BindLet(Let let, Environment frame) implements Kont {}

    private record Branch(If node, Environment frame) implements Kont {}

    private record Project(TupleGetItem node) implements Kont {}

    private record Select(Match node, Environment frame) implements Kont {}

    private record NewRef() implements Kont {}

    private record ReadRef(RefRead node) implements Kont {}

    /** Gathers the fields of a tuple. */
    private static final class GatherTuple implements Kont {
        final Tuple node;
        final Environment frame;
        final Value[] values;
        int next = 1;

        GatherTuple(Tuple node, Environment frame) {
            this.node = node;
            this.frame = frame;
            this.values = new Value[node.fields().size()];
        }
    }

    /** Gathers the callee (unless it is a name, known without evaluation) and then the arguments. */
    private static final class GatherCall implements Kont {
        final Call node;
        final Environment frame;
        final Value[] args;
        Value callee;
        int next;

        GatherCall(Call node, Environment frame, Value callee) {
            this.node = node;
            this.frame = frame;
            this.callee = callee;
            this.args = new Value[node.args().size()];
        }
    }

    /** Gathers the reference, then the value, of a {@code ref_write}. */
    private static final class GatherWrite implements Kont {
        final RefWrite node;
        final Environment frame;
        Value ref;

        GatherWrite(RefWrite node, Environment frame) {
            this.node = node;
            this.frame = frame;
        }
    }

    // ---------------------------------------------------------------- the machine

    /**
     * The machine state: either an expression to evaluate ({@code control != null}) in
     * {@code frame}, or a {@code value} to hand to the top continuation.
     */
    private final class Machine {
        Expr control;
        Environment frame;
        Value value;
        final ArrayList<Kont> stack = new ArrayList<>();
        // Budgets (InterpreterOptions); where we are, for their messages.
        private long steps;
        private final long maxSteps = options.maxSteps();
        private final int maxStack = options.maxStackDepth();
        private final long deadline = options.timeout() == null ? Long.MAX_VALUE : System.nanoTime() + options.timeout().toNanos();
        private final long started = System.nanoTime();
        private String function = "the expression";
        private Span callSite = Span.NONE;

        Value run() {
            while (true) {
                if (++steps > maxSteps) {
                    throw exceeded(InterpreterOptions.Budget.STEPS, "step budget of " + maxSteps + " steps used up");
                }
                // The clock and the interrupt flag are checked every 1,024 steps: cheap, and still
                // well under a millisecond apart.
                if ((steps & 1023) == 0) checkClock();
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
            if (stack.size() >= maxStack) {
                throw exceeded(InterpreterOptions.Budget.STACK_DEPTH, "stack budget of " + maxStack + " continuation frames used up (non-tail recursion too deep or endless)");
            }
            stack.add(k);
        }

        private void checkClock() {
            if (Thread.currentThread().isInterrupted()) {
                // The flag stays set: the caller (a cancelled job) decides what the interrupt means.
                throw exceeded(InterpreterOptions.Budget.INTERRUPTED, "evaluation interrupted after " + steps + " steps");
            }
            if (System.nanoTime() - deadline > 0) {
                throw exceeded(InterpreterOptions.Budget.TIMEOUT, "time budget of " + options.timeout().toMillis() + " ms used up after " + steps + " steps");
            }
        }

        /**
         * The error for a budget that ran out: which one, its value (in {@code what}), the function
         * being evaluated and where it was called, and the option that raises it.
         */
        InterpreterException exceeded(InterpreterOptions.Budget budget, String what) {
            StringBuilder sb = new StringBuilder(what).append(" in ").append(function);
            if (callSite.isKnown()) sb.append(" (called at ").append(callSite).append(')');
            sb.append(String.format(" after %.1f s", (System.nanoTime() - started) / 1e9));
            if (!budget.option.isEmpty()) {
                sb.append("; the limit is InterpreterOptions.").append(budget.option).append(" (relayc run ").append(budget.cliOption).append(')');
            }
            Span at = control != null ? control.span() : Span.NONE;
            return new InterpreterException(sb.toString(), at, null, budget);
        }

        private void pop(int top) {
            stack.remove(top);
        }

        /** Starts evaluating {@code e} in {@code frame}: produces a value or sets up the next control. */
        private void step(Expr e) {
            if (frame.isShared(e)) {
                Value known = frame.memoized(e);
                if (known != null) {
                    value = known;
                    return;
                }
                push(new Memoize(e, frame));
            }
            switch (e) {
                case Var v -> {
                    Value found = frame.find(v);
                    if (found == null) throw new InterpreterException("unbound variable " + v, v.span());
                    value = found;
                }
                case GlobalVar g -> value = new FunctionRefValue(g);
                case Constant c -> value = new TensorValue(c.data());
                case Op o -> value = new FunctionRefValue(o);
                // A constructor without fields is its own value (Nil, Z); one with fields is a function.
                case Constructor c -> value = c.inputs().isEmpty() ? new ConstructorValue(c, List.of()) : new FunctionRefValue(c);
                case Function f -> value = new ClosureValue(f, frame);
                case Tuple t -> {
                    if (t.fields().isEmpty()) {
                        value = Value.UNIT;
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
                        // Bound before the body runs and captured by reference: the function sees itself.
                        frame.bind(l.var(), new ClosureValue(f, frame));
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
                    boolean named = callee instanceof Op || callee instanceof GlobalVar || callee instanceof Constructor;
                    GatherCall k = new GatherCall(c, frame, named ? new FunctionRefValue(callee) : null);
                    if (!named) {
                        push(k);
                        control = callee;
                    } else if (c.args().isEmpty()) {
                        enter(k.callee, k.args, c);
                    } else {
                        push(k);
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
                    push(new ReadRef(r));
                    control = r.ref();
                }
                case RefWrite r -> {
                    push(new GatherWrite(r, frame));
                    control = r.ref();
                }
            }
        }

        /** Hands {@code value} to continuation {@code k}, which sits at stack index {@code top}. */
        private void resume(Kont k, int top) {
            switch (k) {
                case Memoize m -> {
                    pop(top);
                    m.frame().memoize(m.node(), value);
                }
                case BindLet b -> {
                    pop(top);
                    frame = b.frame();
                    frame.bind(b.let().var(), value);
                    control = b.let().body();
                }
                case Branch b -> {
                    pop(top);
                    frame = b.frame();
                    control = condition(b.node(), value) ? b.node().thenBranch() : b.node().elseBranch();
                }
                case Project p -> {
                    pop(top);
                    if (!(value instanceof TupleValue t)) {
                        throw new InterpreterException("projection ." + p.node().index() + " of a non-tuple value " + Value.describe(value), p.node().span());
                    }
                    if (p.node().index() < 0 || p.node().index() >= t.fields().size()) {
                        throw new InterpreterException("projection ." + p.node().index() + " out of range for a tuple of " + t.fields().size() + " fields", p.node().span());
                    }
                    value = t.get(p.node().index());
                }
                case Select s -> {
                    pop(top);
                    frame = s.frame();
                    control = select(s.node(), value, frame);
                }
                case NewRef n -> {
                    pop(top);
                    value = new RefValue(value);
                }
                case ReadRef r -> {
                    pop(top);
                    value = asRef(value, r.node().span(), "ref_read").get();
                }
                case GatherWrite w -> {
                    if (w.ref == null) {
                        w.ref = value;
                        frame = w.frame;
                        control = w.node.value();
                    } else {
                        pop(top);
                        asRef(w.ref, w.node.span(), "ref_write").set(value);
                        value = Value.UNIT;
                    }
                }
                case GatherTuple g -> {
                    g.values[g.next - 1] = value;
                    if (g.next < g.values.length) {
                        frame = g.frame;
                        control = g.node.fields().get(g.next++);
                    } else {
                        pop(top);
                        value = new TupleValue(Arrays.asList(g.values));
                    }
                }
                case GatherCall g -> {
                    if (g.callee == null) {
                        g.callee = value;
                    } else {
                        g.args[g.next++] = value;
                    }
                    if (g.next < g.args.length) {
                        frame = g.frame;
                        control = g.node.args().get(g.next);
                    } else {
                        pop(top);
                        enter(g.callee, g.args, g.node);
                    }
                }
            }
        }

        /**
         * Calls {@code fn}: a function body becomes the next control in a fresh frame (nothing is
         * pushed, so calls in tail position run in constant space); an operator or a constructor
         * produces its value at once. {@code site} is null for calls from Java.
         */
        void enter(Value fn, Value[] args, Call site) {
            Span span = site == null ? Span.NONE : site.span();
            switch (fn) {
                case ClosureValue c -> enterBody(c.function(), c.env(), args, span, "the closure");
                case FunctionRefValue(GlobalVar g) -> {
                    Function f = module.functions().get(g);
                    if (f == null) throw new InterpreterException("no global function " + g + " in the module", span);
                    enterBody(f, null, args, span, g.toString());
                }
                case FunctionRefValue(Constructor c) -> {
                    if (args.length != c.inputs().size()) {
                        throw new InterpreterException("constructor " + c.name() + " takes " + c.inputs().size() + " arguments, got " + args.length, span);
                    }
                    value = new ConstructorValue(c, Arrays.asList(args));
                }
                case FunctionRefValue(Op o) -> value = callOp(o, args, site, this);
                case FunctionRefValue f -> throw new IllegalStateException("unexpected function reference " + f);
                case TensorValue t -> throw notCallable(fn, span);
                case TupleValue t -> throw notCallable(fn, span);
                case RefValue r -> throw notCallable(fn, span);
                case ConstructorValue c -> throw notCallable(fn, span);
            }
        }

        private void enterBody(Function f, Environment captured, Value[] args, Span span, String what) {
            List<Var> params = f.params();
            if (params.size() != args.length) {
                throw new InterpreterException(what + " takes " + params.size() + " arguments " + params + ", got " + args.length, span);
            }
            Environment callee = new Environment(captured, bodyInfo(f.body()), params.size());
            for (int i = 0; i < args.length; i++) callee.bind(params.get(i), args[i]);
            function = what;
            callSite = span;
            frame = callee;
            control = f.body();
        }
    }

    private static InterpreterException notCallable(Value v, Span span) {
        return new InterpreterException("cannot call a non-function value: " + Value.describe(v), span);
    }

    private static RefValue asRef(Value v, Span span, String what) {
        if (v instanceof RefValue r) return r;
        throw new InterpreterException(what + " of a non-reference value " + Value.describe(v), span);
    }

    private static boolean condition(If node, Value v) {
        if (v instanceof TensorValue(NDArray a) && a.dtype().equals(DType.BOOL) && a.size() == 1) return a.getBoolean(0);
        throw new InterpreterException("if condition must be a bool scalar, got " + Value.describe(v), node.span());
    }

    private SharedNodes.BodyInfo bodyInfo(Expr body) {
        return bodies.computeIfAbsent(body, SharedNodes::analyse);
    }

    // ---------------------------------------------------------------- match

    /** Binds the first matching clause's variables in {@code frame} and returns its body. */
    private static Expr select(Match m, Value v, Environment frame) {
        List<Var> vars = new ArrayList<>();
        List<Value> values = new ArrayList<>();
        for (Clause cl : m.clauses()) {
            vars.clear();
            values.clear();
            if (matches(cl.pattern(), v, vars, values)) {
                for (int i = 0; i < vars.size(); i++) frame.bind(vars.get(i), values.get(i));
                return cl.body();
            }
        }
        throw new InterpreterException("no clause of the match" + (m.complete() ? "" : "?") + " matches the value " + Value.describe(v), m.span());
    }

    /** Patterns nest only as deep as the program text writes them, so recursion is fine here. */
    private static boolean matches(Pattern p, Value v, List<Var> vars, List<Value> values) {
        return switch (p) {
            case Pattern.Wildcard w -> true;
            case Pattern.Bind b -> {
                vars.add(b.var());
                values.add(v);
                yield true;
            }
            case Pattern.Ctor c -> {
                if (!(v instanceof ConstructorValue cv) || !cv.constructor().equals(c.constructor())) yield false;
                if (cv.fields().size() != c.args().size()) yield false;
                for (int i = 0; i < c.args().size(); i++) {
                    if (!matches(c.args().get(i), cv.fields().get(i), vars, values)) yield false;
                }
                yield true;
            }
            case Pattern.TuplePattern t -> {
                if (!(v instanceof TupleValue tv) || tv.fields().size() != t.fields().size()) yield false;
                for (int i = 0; i < t.fields().size(); i++) {
                    if (!matches(t.fields().get(i), tv.fields().get(i), vars, values)) yield false;
                }
                yield true;
            }
        };
    }

    // ---------------------------------------------------------------- operators

    /**
     * An operator call node made ready to run: attributes parsed once into the operator's typed
     * record, and (once known) whether its result is a tuple even when the kernel returns a single
     * array (a one-way {@code split}).
     */
    private static final class PreparedOp {
        final OpDef<?> def;
        final java.util.function.Function<List<NDArray>, List<NDArray>> kernel;
        Boolean singleResultIsTuple;

        PreparedOp(OpDef<?> def, java.util.function.Function<List<NDArray>, List<NDArray>> kernel) {
            this.def = def;
            this.kernel = kernel;
        }

        static <A> PreparedOp of(OpDef<A> def, Attrs attrs) {
            A parsed = def.parseAttrs(attrs);
            return new PreparedOp(def, inputs -> def.kernel().compute(inputs, parsed));
        }
    }

    private PreparedOp prepare(Op op, Attrs attrs, Span span) {
        OpDef<?> def;
        try {
            def = ops.apply(op.name());
        } catch (RuntimeException e) {
            throw new InterpreterException("operator " + op.name() + ": " + e.getMessage(), span, e);
        }
        try {
            return PreparedOp.of(def, attrs);
        } catch (RuntimeException e) {
            throw new InterpreterException("operator " + op.name() + ": bad attributes: " + e.getMessage(), span, e);
        }
    }

    /** Inputs smaller than this cannot make a result near any sensible tensor budget without attributes. */
    private static final long PREDICT_ABOVE_INPUT_BYTES = 64 * 1024;

    private Value callOp(Op op, Value[] args, Call site, Machine machine) {
        Span span = site == null ? Span.NONE : site.span();
        Attrs attrs = site == null ? Attrs.EMPTY : site.attrs();
        boolean plain = attrs.isEmpty();
        PreparedOp prepared = plain ? preparedPlain.get(op.name()) : preparedCalls.get(site);
        if (prepared == null) {
            prepared = prepare(op, attrs, span);
            if (plain) preparedPlain.put(op.name(), prepared);
            else preparedCalls.put(site, prepared);
        }
        if (prepared.def.numInputs() >= 0 && prepared.def.numInputs() != args.length) {
            throw new InterpreterException("operator " + op.name() + " takes " + prepared.def.numInputs() + " arguments, got " + args.length, span);
        }
        List<NDArray> inputs = new ArrayList<>(args.length);
        for (int i = 0; i < args.length; i++) flatten(op, i, args[i], inputs, span);
        long maxBytes = options.maxTensorBytes();
        long inputBytes = 0;
        for (NDArray a : inputs) inputBytes += a.byteSize();
        if (!attrs.isEmpty() || inputs.isEmpty() || inputBytes >= PREDICT_ABOVE_INPUT_BYTES) {
            // Refuse before the kernel allocates: the relation gives the result's shape.
            long predicted = predictedBytes(prepared, args, attrs);
            if (predicted > maxBytes) {
                throw machine.exceeded(InterpreterOptions.Budget.TENSOR_BYTES, "operator " + op.name() + " would produce " + predicted
                        + " bytes, over the tensor budget of " + maxBytes + " bytes");
            }
        }
        List<NDArray> out;
        try {
            out = prepared.kernel.apply(inputs);
        } catch (InterpreterException e) {
            throw e;
        } catch (RuntimeException e) {
            String shapes = inputs.stream().map(a -> Value.typeOf(a).toString()).toList().toString();
            throw new InterpreterException("operator " + op.name() + " failed on inputs " + shapes + ": " + e.getMessage(), span, e);
        }
        if (out == null || out.isEmpty()) {
            throw new InterpreterException("operator " + op.name() + " returned no result", span);
        }
        for (NDArray a : out) {
            if (a.byteSize() > maxBytes) {
                throw machine.exceeded(InterpreterOptions.Budget.TENSOR_BYTES, "operator " + op.name() + " produced " + a.byteSize()
                        + " bytes, over the tensor budget of " + maxBytes + " bytes");
            }
        }
        if (out.size() == 1 && !singleResultIsTuple(prepared, args, attrs)) return new TensorValue(out.get(0));
        List<Value> fields = new ArrayList<>(out.size());
        for (NDArray a : out) fields.add(new TensorValue(a));
        return new TupleValue(fields);
    }

    /** Bytes of the largest result the operator's type relation predicts; 0 when it cannot say. */
    private static long predictedBytes(PreparedOp prepared, Value[] args, Attrs attrs) {
        try {
            List<Type> inputTypes = new ArrayList<>(args.length);
            for (Value a : args) inputTypes.add(typeForRelation(a));
            return prepared.def.inferOutput(inputTypes, attrs).map(Interpreter::largestBytes).orElse(0L);
        } catch (RuntimeException e) {
            return 0; // the kernel reports bad inputs better than the relation would here
        }
    }

    private static long largestBytes(Type t) {
        return switch (t) {
            case TensorType tt -> {
                long n = tt.dtype().storageBytes();
                for (Dim d : tt.shape()) {
                    if (!(d instanceof Dim.Int(long v))) yield 0;
                    n = v <= 0 ? 0 : (n > Long.MAX_VALUE / v ? Long.MAX_VALUE : n * v);
                }
                yield n;
            }
            case TupleType tt -> tt.fields().stream().mapToLong(Interpreter::largestBytes).max().orElse(0);
            default -> 0;
        };
    }

    /**
     * A kernel returns one array per tuple field, so a single array is ambiguous only for operators
     * that may return one-field tuples. The operator's type relation decides, once per prepared call
     * (per operator, or per call node when it has attributes).
     */
    private static boolean singleResultIsTuple(PreparedOp prepared, Value[] args, Attrs attrs) {
        if (prepared.singleResultIsTuple == null) {
            boolean tuple;
            try {
                List<Type> inputTypes = new ArrayList<>(args.length);
                for (Value a : args) inputTypes.add(typeForRelation(a));
                tuple = prepared.def.inferOutput(inputTypes, attrs).map(t -> t instanceof TupleType).orElse(false);
            } catch (RuntimeException e) {
                // The kernel accepted these inputs, so a relation that cannot say means "not a tuple".
                tuple = false;
            }
            prepared.singleResultIsTuple = tuple;
        }
        return prepared.singleResultIsTuple;
    }

    private static Type typeForRelation(Value v) {
        return switch (v) {
            case TensorValue(NDArray a) -> Value.typeOf(a);
            case TupleValue t -> new TupleType(t.fields().stream().map(Interpreter::typeForRelation).toList());
            default -> throw new IllegalArgumentException("not a tensor");
        };
    }

    /** Tuple-typed operator arguments (the input of {@code concatenate}) reach kernels field by field. */
    private static void flatten(Op op, int index, Value v, List<NDArray> out, Span span) {
        switch (v) {
            case TensorValue(NDArray a) -> out.add(a);
            case TupleValue t -> {
                for (Value f : t.fields()) flatten(op, index, f, out, span);
            }
            default -> throw new InterpreterException("operator " + op.name() + ": argument " + index + " must be a tensor or a tuple of tensors, got " + Value.describe(v), span);
        }
    }

    // ---------------------------------------------------------------- entry argument checks

    private static void checkEntryArguments(String global, Function fn, List<Value> args) {
        if (fn.params().size() != args.size()) {
            StringBuilder sig = new StringBuilder();
            for (Var p : fn.params()) {
                if (!sig.isEmpty()) sig.append(", ");
                sig.append(p).append(p.hasAnnotation() ? ": " + p.annotation() : "");
            }
            throw new InterpreterException("@" + global + " takes " + fn.params().size() + " arguments (" + sig + "), got " + args.size(), fn.span());
        }
        Map<String, Long> symbols = new HashMap<>();
        for (int i = 0; i < args.size(); i++) {
            Var p = fn.params().get(i);
            if (p.hasAnnotation() && !conforms(args.get(i), p.annotation(), symbols)) {
                throw new InterpreterException("@" + global + " parameter " + p + " expects " + p.annotation() + ", got " + Value.describe(args.get(i)), p.span());
            }
        }
    }

    /**
     * Whether {@code v} can be a value of {@code t}. Symbolic dimensions must agree across all
     * parameters ({@code n} is one size); {@code ?} and type variables accept anything.
     */
    private static boolean conforms(Value v, Type t, Map<String, Long> symbols) {
        return switch (t) {
            case TensorType tt -> {
                if (!(v instanceof TensorValue(NDArray a)) || !a.dtype().equals(tt.dtype()) || a.rank() != tt.rank()) yield false;
                for (int i = 0; i < tt.rank(); i++) {
                    long actual = a.dim(i);
                    boolean ok = switch (tt.shape().get(i)) {
                        case Dim.Int d -> d.value() == actual;
                        case Dim.Sym s -> symbols.computeIfAbsent(s.name(), k -> actual) == actual;
                        case Dim.Any any -> true;
                        case Dim.Bin b -> true; // derived sizes are checked by the operators that use them
                    };
                    if (!ok) yield false;
                }
                yield true;
            }
            case TupleType tt -> {
                if (!(v instanceof TupleValue tv) || tv.fields().size() != tt.fields().size()) yield false;
                for (int i = 0; i < tt.fields().size(); i++) {
                    if (!conforms(tv.fields().get(i), tt.fields().get(i), symbols)) yield false;
                }
                yield true;
            }
            case FuncType f -> v instanceof ClosureValue || v instanceof FunctionRefValue;
            case RefType r -> v instanceof RefValue;
            case TypeCall c -> c.func() instanceof GlobalTypeVar g ? isAdtValue(v, g) : true;
            case GlobalTypeVar g -> isAdtValue(v, g);
            case TypeVar tv -> true;
            case IncompleteType i -> true;
        };
    }

    private static boolean isAdtValue(Value v, GlobalTypeVar adt) {
        return v instanceof ConstructorValue cv && cv.constructor().belongsTo().name().equals(adt.name());
    }
}
