package dev.relayfarm.compile;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * "Can the graph executor run this?", asked of a typed module right after type inference, so that a model that
 * can only fail at codegen fails at the {@code infer} stage instead, after seconds rather than after optimization
 * and tuning. Answers with a {@link GraphException} naming the construct and its source location.
 *
 * <p>It rejects only what no pass of the optimization pipeline can turn into something the executor runs
 * (the pipeline folds an {@code if} on a constant condition, drops effect-free tuple fields, evaluates operator
 * calls on constants and rewrites dynamic operators with constant shape operands; {@link GraphBuilder} is the
 * final word at codegen):
 * <ol>
 *   <li>no {@code @main};</li>
 *   <li>an input or result of {@code @main} holding string tensors (artifacts hold numeric buffers only; a string
 *       tensor inside the dataflow is refused by {@link GraphBuilder});</li>
 *   <li>an input of {@code @main} that is not a tensor, or whose shape is not static ({@code ?} or a symbolic dim):
 *       no pass changes {@code @main}'s parameters, and the executor's buffers have fixed sizes;</li>
 *   <li>a result of {@code @main} that is not tensors or tuples of tensors (a closure, an ADT value, a reference);</li>
 *   <li>on the path the result certainly depends on ({@code @main}'s result, the lets it reads, an {@code if}'s
 *       condition; a constant condition's taken branch only; a literal tuple's projected field only): an
 *       {@code if} or {@code match} deciding on the inputs' values (no constant folding can decide it), a
 *       reference ({@code ref}, {@code ref_read}, {@code ref_write}: effects, never removed), an ADT constructor;</li>
 *   <li>recursion on that path: {@code @main} calling itself, or a function it calls that calls itself through its
 *       own certain path.</li>
 * </ol>
 * Items 4 and 5 are asked again after {@code unroll-loops} and {@code if-conversion} (a loop of static trip count
 * is unrolled, an {@code if} with cheap dataflow branches becomes a select), and stand only when those leave them.
 * What it lets through on purpose: calls of non-recursive global functions and function literals (an inliner may
 * remove them), an {@code if} or {@code match} whose condition is not computed from the inputs' values (folding may
 * decide it; {@code shape_of} of a static input is a constant), intermediate dynamic shapes ({@code dynamic-to-static}
 * may make them static), anything in a branch that may be folded away.
 */
public final class ExecutableCheck {
    /** Operators whose result depends on their operand's type (shape, dtype) only, which is static: folding makes them constants. */
    private static final Set<String> SHAPE_ONLY = Set.of("shape_of", "ndarray_size", "zeros_like", "ones_like", "full_like");

    /** Operators whose result shape depends on their operands' values (kernel/lower's DataDependentKernels: the VM runs them). */
    private static final Set<String> VALUE_SHAPED = Set.of("arange", "argwhere", "unique", "vision.onnx_non_max_suppression");

    private ExecutableCheck() {}

    /** Throws a {@link GraphException} naming the first construct of {@code typed} the graph executor certainly cannot run. */
    public static void check(IRModule typed) {
        problem(typed).ifPresent(p -> {
            throw new GraphException(p);
        });
    }

    /**
     * Why the graph executor cannot run {@code typed} (after any optimization), or empty when it may. A
     * module with recursion or an {@code if} on the inputs' values is asked again after the passes that
     * may remove them ({@link #LOWERING_PASSES}: unrolling a loop of static trip count, if-conversion of
     * cheap branches); the answer names the original construct when they do not.
     */
    public static Optional<String> problem(IRModule typed) {
        Optional<String> p = directProblem(typed);
        if (p.isEmpty()) return p;
        try {
            IRModule lowered = PassRegistry.sequential("executable-check", LOWERING_PASSES).run(typed, new PassContext(PassOptions.level(1))).module();
            if (lowered != typed && directProblem(TypeInference.infer(lowered).module()).isEmpty()) return Optional.empty();
        } catch (RuntimeException e) {
            // a pass or re-typing failing here is reported at optimization; the construct found stands
        }
        return p;
    }

    /** The passes of the standard pipeline (from -O1) that turn recursion and control flow into dataflow. */
    static final List<String> LOWERING_PASSES = List.of("unroll-loops", "if-conversion");

    private static Optional<String> directProblem(IRModule typed) {
        Optional<Function> mainOpt = typed.main();
        if (mainOpt.isEmpty()) {
            List<String> names = typed.functions().keySet().stream().map(g -> "@" + g.name()).sorted().toList();
            return Optional.of("the module has no @main, the function the graph executor runs"
                    + (names.isEmpty() ? " (the module is empty)" : " (it defines " + String.join(", ", names) + ")"));
        }
        Function main = mainOpt.get();
        for (Var p : main.params()) {
            Type t = p.annotation();
            String where = "input %" + p.name() + " of @main" + at(p.span(), main.span());
            if (t != null && !(t instanceof TensorType)) return Optional.of(where + " has type " + t + ": the graph executor takes tensor inputs only");
            if (StringTensors.contains(t)) return Optional.of(StringTensors.refusal(where + " has type " + t));
            if (t instanceof TensorType tt && !tt.isStatic()) {
                return Optional.of(where + " has a dynamic shape " + tt + ": give it static dims (a job's shapes field, or --shape "
                        + p.name() + "=" + exampleDims(tt) + ")");
            }
        }
        if (StringTensors.contains(main.retType())) {
            return Optional.of(StringTensors.refusal("the result of @main" + at(main.span(), Span.NONE) + " has type " + main.retType()));
        }
        if (main.retType() != null && !tensorsOnly(main.retType())) {
            return Optional.of("the result of @main" + at(main.span(), Span.NONE) + " has type " + main.retType()
                    + ": the graph executor returns tensors and tuples of tensors only");
        }
        Map<String, Walk> walks = new HashMap<>();
        Walk mainWalk = walk(main, "main");
        if (mainWalk.problem != null) return Optional.of(mainWalk.problem);
        walks.put("main", mainWalk);
        // recursion along certain calls: depth-first from @main, a global met again on the current path is a cycle
        return cycle("main", typed, walks, new ArrayList<>(), new java.util.HashSet<>());
    }

    private static Optional<String> cycle(String g, IRModule m, Map<String, Walk> walks, List<String> path, Set<String> done) {
        if (done.contains(g)) return Optional.empty();
        int i = path.indexOf(g);
        if (i >= 0) {
            List<String> loop = new ArrayList<>(path.subList(i, path.size()));
            loop.add(g);
            String caller = path.getLast();
            Span call = walks.get(caller).calls.get(g);
            String chain = String.join(" -> ", loop.stream().map(n -> "@" + n).toList());
            String head = g.equals("main") ? "@main is recursive" : "@main calls @" + g + ", which is recursive";
            return Optional.of(head + " (" + chain + ", call at " + (call.isKnown() ? call : "@" + caller) + "): the graph executor cannot run recursion"
                    + " (an ONNX Loop or a recursive Relay function); it runs straight-line tensor dataflow");
        }
        Optional<Function> f = m.function(g);
        if (f.isEmpty()) return Optional.empty(); // an unknown global: type inference reports it
        Walk w = walks.computeIfAbsent(g, n -> walk(f.get(), n));
        if (w.problem != null) return Optional.of("@main calls @" + g + ", which has " + w.problem);
        path.add(g);
        for (String callee : w.calls.keySet()) {
            Optional<String> c = cycle(callee, m, walks, path, done);
            if (c.isPresent()) return c;
        }
        path.removeLast();
        done.add(g);
        return Optional.empty();
    }

    /** What the certain path of one function holds: its certain calls of globals (with the first call's span) and the first problem. */
    private static final class Walk {
        final Map<String, Span> calls = new LinkedHashMap<>();
        String problem;
    }

    /** A node to visit; {@code certain}: the result needs it whatever folding does (else it is in a branch that stays). */
    private record Item(Expr e, boolean certain) {}

    /**
     * The nodes {@code f}'s result certainly needs, demand-driven from the body: a let's value only when its variable
     * is needed. In {@code @main} the parameters are the inputs (values unknown until run time): an {@code if} or
     * {@code match} deciding on them is a problem. In another function the parameters may become constants once it
     * is inlined, so its control flow is no problem by itself; but while a branch decides on them, both branches
     * stay, and their calls count as edges for the recursion check (a recursive function is never inlined, so such
     * a branch never goes away).
     */
    private static Walk walk(Function f, String name) {
        Walk w = new Walk();
        boolean isMain = name.equals("main");
        String fn = "@" + name;
        Map<Var, Expr> lets = new IdentityHashMap<>();
        Map<Expr, Boolean> seenCertain = new IdentityHashMap<>();
        Map<Expr, Boolean> seenAny = new IdentityHashMap<>();
        Set<Var> params = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        params.addAll(f.params());
        ArrayDeque<Item> todo = new ArrayDeque<>();
        todo.push(new Item(f.body(), true));
        Span near = f.span();
        while (!todo.isEmpty()) {
            Item item = todo.pop();
            Expr e = item.e();
            boolean certain = item.certain();
            if (certain ? seenCertain.put(e, Boolean.TRUE) != null : seenAny.containsKey(e)) continue;
            seenAny.put(e, Boolean.TRUE);
            if (e.span() != null && e.span().isKnown()) near = e.span();
            String problem = switch (e) {
                case Let l -> {
                    // a let chain is walked without recursion: bindings recorded, the body demanded
                    lets.put(l.var(), l.value());
                    todo.push(new Item(l.body(), certain));
                    yield null;
                }
                case Var v -> {
                    Expr bound = lets.get(v);
                    if (bound != null) todo.push(new Item(bound, certain));
                    yield null;
                }
                case If i -> {
                    todo.push(new Item(i.cond(), certain));
                    if (i.cond() instanceof Constant c && c.data().rank() == 0 && c.data().dtype().equals(DType.BOOL)) {
                        todo.push(new Item(c.data().getBoolean(0) ? i.thenBranch() : i.elseBranch(), certain));
                    } else if (dependsOn(i.cond(), params, lets)) {
                        if (isMain) {
                            yield "an if in @main" + at(i.span(), near) + " decides on the inputs' values: the graph executor has no control flow"
                                    + " (only an if on a constant condition is folded away)";
                        }
                        todo.push(new Item(i.elseBranch(), false));
                        todo.push(new Item(i.thenBranch(), false));
                    }
                    yield null;
                }
                case Match mt -> {
                    todo.push(new Item(mt.data(), certain));
                    if (dependsOn(mt.data(), params, lets)) {
                        if (isMain) yield "a match in @main" + at(mt.span(), near) + " decides on the inputs' values: the graph executor has no control flow";
                        for (var clause : mt.clauses()) todo.push(new Item(clause.body(), false));
                    }
                    yield null;
                }
                case RefCreate r -> "a reference (ref) in " + fn + at(r.span(), near) + ": the graph executor has no mutable state";
                case RefRead r -> "a reference read (ref_read) in " + fn + at(r.span(), near) + ": the graph executor has no mutable state";
                case RefWrite r -> "a reference write (ref_write) in " + fn + at(r.span(), near) + ": the graph executor has no mutable state";
                case Constructor c -> "constructor " + c.name() + " in " + fn + at(c.span(), near) + ": the graph executor runs tensors, not ADT values";
                case Call c -> {
                    switch (c.callee()) {
                        case GlobalVar g -> w.calls.putIfAbsent(g.name(), c.span() != null && c.span().isKnown() ? c.span() : near);
                        case Op op when isMain && VALUE_SHAPED.contains(op.name()) && dependsOn(c, params, lets) -> {
                            yield "operator " + op.name() + " in @main" + at(c.span(), near) + " gives a result whose shape depends on the inputs' values:"
                                    + " the graph executor plans static shapes only";
                        }
                        case Op op -> { }
                        case Function lit -> { } // a literal's body: an inliner may dissolve it; GraphBuilder judges it at codegen
                        case Var v when lets.get(v) instanceof Function lit && !lit.isPrimitive() && mentions(lit.body(), v) -> {
                            // a local function that calls itself (let %fact = fn ... %fact(...)): no pass inlines or unrolls it
                            yield "@main calls %" + v.name() + at(c.span(), near) + ", a recursive local function: the graph executor cannot run recursion;"
                                    + " it runs straight-line tensor dataflow";
                        }
                        default -> todo.push(new Item(c.callee(), certain));
                    }
                    for (int k = c.args().size() - 1; k >= 0; k--) todo.push(new Item(c.args().get(k), certain));
                    yield null;
                }
                case TupleGetItem g -> {
                    // a projection of a literal tuple keeps only that field (fold-constant drops the others when pure)
                    Expr t = g.tuple();
                    while (t instanceof Var v && lets.get(v) instanceof Tuple) t = lets.get(v);
                    if (t instanceof Tuple tup && g.index() < tup.fields().size()) todo.push(new Item(tup.fields().get(g.index()), certain));
                    else todo.push(new Item(g.tuple(), certain));
                    yield null;
                }
                case Tuple t -> {
                    for (int k = t.fields().size() - 1; k >= 0; k--) todo.push(new Item(t.fields().get(k), certain));
                    yield null;
                }
                case Function lit -> null; // a closure or Primitive function value: not judged here
                default -> null;            // constants, operators, globals as values
            };
            // only what the result certainly needs is a problem; a branch that stays only adds calls
            if (problem != null && certain) {
                w.problem = problem;
                return w;
            }
        }
        return w;
    }

    /**
     * Whether {@code e}'s value is computed from the values of {@code inputs} (not just their static shapes): then
     * no folding inside the function can make it a constant. Follows lets; stops at shape-only operators, constants and function literals.
     */
    private static boolean dependsOn(Expr e, Set<Var> inputs, Map<Var, Expr> lets) {
        ArrayDeque<Expr> todo = new ArrayDeque<>();
        Map<Expr, Boolean> seen = new IdentityHashMap<>();
        todo.push(e);
        while (!todo.isEmpty()) {
            Expr x = todo.pop();
            if (seen.put(x, Boolean.TRUE) != null) continue;
            switch (x) {
                case Var v -> {
                    if (inputs.contains(v)) return true;
                    Expr bound = lets.get(v);
                    if (bound != null) todo.push(bound);
                }
                case Call c -> {
                    if (c.callee() instanceof Op op && SHAPE_ONLY.contains(op.name())) continue;
                    for (Expr a : c.args()) todo.push(a);
                }
                case Let l -> {
                    lets.put(l.var(), l.value());
                    todo.push(l.body());
                }
                case Function f -> { }
                case Constant c -> { }
                default -> x.children().forEach(todo::push);
            }
        }
        return false;
    }

    /** Whether {@code v} occurs in {@code body}. */
    private static boolean mentions(Expr body, Var v) {
        ArrayDeque<Expr> todo = new ArrayDeque<>();
        Map<Expr, Boolean> seen = new IdentityHashMap<>();
        todo.push(body);
        while (!todo.isEmpty()) {
            Expr x = todo.pop();
            if (x == v) return true;
            if (seen.put(x, Boolean.TRUE) == null) x.children().forEach(todo::push);
        }
        return false;
    }

    private static boolean tensorsOnly(Type t) {
        return switch (t) {
            case TensorType tt -> true;
            case TupleType tt -> tt.fields().stream().allMatch(ExecutableCheck::tensorsOnly);
            default -> false;
        };
    }

    /** " at FILE:LINE:COL" for the node's span, else the nearest known one, else nothing. */
    private static String at(Span span, Span near) {
        if (span != null && span.isKnown()) return " at " + span;
        if (near != null && near.isKnown()) return " (near " + near + ")";
        return "";
    }

    private static String exampleDims(TensorType t) {
        List<String> dims = new ArrayList<>();
        for (var d : t.shape()) dims.add(d instanceof dev.relayfarm.ir.Dim.Int(long v) ? String.valueOf(v) : "1");
        return String.join("x", dims);
    }
}
