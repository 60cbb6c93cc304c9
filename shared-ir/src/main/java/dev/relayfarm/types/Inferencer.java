package dev.relayfarm.types;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.Binders;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
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
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Constraint generation and the module-level driver of type inference (the algorithm of the Relay
 * paper): walk each global function, give every node a type made of known types and fresh holes,
 * unify where the typing rules demand equality, and add one relation per operator call (plus one per
 * tuple projection whose tuple type is still unknown); then run the {@link TypeSolver} to a fixpoint.
 *
 * <p>Globals are checked one strongly connected component at a time, callees first. An unannotated
 * global's signature starts as holes, so references before its definition and (mutual) recursion
 * work; a global with type parameters ({@code def @id[A](%x: A) -> A}) is generalized once its
 * component is done and instantiated with fresh holes at every use. Type variables are rigid inside
 * their function.
 *
 * <p>The walk is iterative (explicit stack, post-order with a hook after each child), so 100,000-deep
 * let chains and dataflow chains need no extra Java stack. Binders are keyed by their {@link Var}
 * object, so scoping needs no environment chain. The first error in a component stops that component
 * (and silently skips components that reference one of its unannotated globals), so one mistake does
 * not cascade.
 */
final class Inferencer {
    private static final TensorType BOOL_SCALAR = TensorType.scalar(DType.BOOL);

    private enum Status { PENDING, CHECKING, DONE, FAILED, SKIPPED, KNOWN }

    /** Per-global state. */
    private static final class Global {
        final GlobalVar gv;
        final Function fn;
        final String name;
        FuncType sig;
        boolean fullyAnnotated;
        Status status = Status.PENDING;
        final List<Expr> visited = new ArrayList<>();
        final List<Var> binders = new ArrayList<>();

        Global(GlobalVar gv, Function fn) {
            this.gv = gv;
            this.fn = fn;
            this.name = gv.name();
        }
    }

    /** Stops checking the current component with one diagnostic. */
    private static final class CheckFailure extends RuntimeException {
        final transient Diagnostic diagnostic;

        CheckFailure(Diagnostic diagnostic) {
            super(diagnostic.toString(), null, false, false);
            this.diagnostic = diagnostic;
        }
    }

    /** The component uses an unannotated global that failed; checking it would only repeat that error. */
    private static final class Skip extends RuntimeException {
        Skip() {
            super(null, null, false, false);
        }
    }

    /** A use of a generic callee: its instantiated type and the fresh holes standing for its type arguments. */
    private record Instance(Type type, List<Type> args) {}

    /** One node on the walk stack. */
    private static final class Frame {
        final Expr node;
        final List<Expr> kids;
        /** The nearest known source position: this node's, else its parent frame's (O(1) lookup). */
        final Span span;
        int next;

        Frame(Expr node, Span inherited) {
            this.node = node;
            this.kids = node.children();
            this.span = node.span().isKnown() ? node.span() : inherited;
        }
    }

    private final IRModule module;
    private final OpResolver ops;
    private final TypeSolver solver = new TypeSolver();
    private final IdentityHashMap<Expr, Type> types = new IdentityHashMap<>();
    private final IdentityHashMap<Var, Type> varTypes = new IdentityHashMap<>();
    private final Set<Var> bound = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    private final IdentityHashMap<Call, List<Type>> typeArgs = new IdentityHashMap<>();
    private final Map<GlobalVar, Global> globals = new LinkedHashMap<>();
    /**
     * Each global's Function node, by identity, to the first global it defines. Sharing is legal
     * (e.g. from JSON): used as a value inside another function, the node is that global (typed per
     * use, like {@code @name}); defining a second global, that global is the first one again.
     */
    private final IdentityHashMap<Function, Global> definitions = new IdentityHashMap<>();
    private final List<Diagnostic> errors = new ArrayList<>();
    private final List<Diagnostic> warnings = new ArrayList<>();
    private final ArrayDeque<Frame> stack = new ArrayDeque<>();
    private Global current;

    private Inferencer(IRModule module, OpResolver ops) {
        this.module = module;
        this.ops = ops;
    }

    // ---------------------------------------------------------------- drivers

    static InferResult inferModule(IRModule module, OpResolver ops) {
        Inferencer inf = new Inferencer(module, ops);
        module.functions().forEach((gv, fn) -> inf.globals.put(gv, inf.newGlobal(gv, fn)));
        for (List<GlobalVar> component : CallGraph.components(module)) {
            inf.checkComponent(component.stream().map(inf.globals::get).toList());
        }
        List<Global> all = new ArrayList<>(inf.globals.values());
        inf.finish(all);
        return inf.buildResult(all, null);
    }

    /**
     * Re-checks only {@code gv}; every other global's type is taken from {@code known} (or, when
     * absent there, from its full annotations).
     */
    static InferResult inferFunction(IRModule module, GlobalVar gv, Map<GlobalVar, FuncType> known,
            InferResult previous, OpResolver ops) {
        Function fn = module.lookup(gv);
        Inferencer inf = new Inferencer(module, ops);
        Global target = null;
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            Global g = inf.newGlobal(e.getKey(), e.getValue());
            if (e.getKey().equals(gv)) {
                target = g;
            } else {
                g.status = Status.KNOWN;
                FuncType k = known.get(e.getKey());
                g.sig = k != null ? k : g.fullyAnnotated ? g.sig : null;
            }
            inf.globals.put(e.getKey(), g);
        }
        if (target == null || target.fn != fn) throw new IllegalStateException("global @" + gv.name() + " not found");
        inf.checkComponent(List.of(target));
        inf.finish(List.of(target));
        return inf.buildResult(List.of(target), previous);
    }

    private Global newGlobal(GlobalVar gv, Function fn) {
        Global g = new Global(gv, fn);
        List<Type> params = new ArrayList<>();
        boolean annotated = fn.retType() != null && !TypeSolver.hasHole(fn.retType());
        for (Var p : fn.params()) {
            params.add(varType(p));
            annotated &= p.hasAnnotation() && !TypeSolver.hasHole(p.annotation());
        }
        Type ret = fn.retType() != null ? fn.retType() : solver.fresh();
        g.sig = new FuncType(fn.typeParams(), params, ret, List.of());
        g.fullyAnnotated = annotated;
        definitions.putIfAbsent(fn, g);
        return g;
    }

    private void checkComponent(List<Global> component) {
        for (Global g : component) g.status = Status.CHECKING;
        try {
            for (Global g : component) {
                current = g;
                walk(g);
            }
            solver.solve();
            for (Global g : component) {
                g.status = Status.DONE;
                if (!g.sig.typeParams().isEmpty() && TypeSolver.hasHole(solver.resolve(g.sig))) {
                    // Its callers instantiate it now, so its signature must be complete now.
                    Optional<Diagnostic> hole = firstHole(g, solver.finalizer());
                    throw new CheckFailure(hole.orElse(Diagnostic.error("under-constrained", g.fn.span(), g.name,
                            "cannot infer the signature of polymorphic @" + g.name + ": " + solver.resolve(g.sig)
                                    + "; annotate its parameters and return type")));
                }
            }
        } catch (CheckFailure f) {
            errors.add(f.diagnostic);
            abandon(component, Status.FAILED);
        } catch (TypeSolver.RelationFailure rf) {
            errors.add(relationDiagnostic(rf.relation, rf.getMessage()));
            rf.relation.dead = true;
            abandon(component, Status.FAILED);
        } catch (Skip s) {
            abandon(component, Status.SKIPPED);
        } finally {
            current = null;
            stack.clear();
        }
    }

    private void abandon(List<Global> component, Status status) {
        Set<String> names = new java.util.HashSet<>();
        for (Global g : component) {
            g.status = status;
            names.add(g.name);
        }
        solver.kill(r -> names.contains(r.global));
    }

    /** After all components: report what stayed unknown, or throw the collected errors. */
    private void finish(List<Global> checked) {
        Map<String, List<TypeSolver.Relation>> unsolved = new LinkedHashMap<>();
        for (TypeSolver.Relation r : solver.unsolved()) unsolved.computeIfAbsent(r.global, k -> new ArrayList<>()).add(r);
        for (Global g : checked) {
            if (g.status != Status.DONE) continue;
            List<TypeSolver.Relation> rs = unsolved.get(g.name);
            if (rs != null) {
                errors.add(underConstrained(rs));
                g.status = Status.FAILED;
            }
        }
        UnaryOperator<Type> fin = solver.finalizer();
        for (Global g : checked) {
            if (g.status != Status.DONE) continue;
            Optional<Diagnostic> hole = firstHole(g, fin);
            if (hole.isPresent()) {
                errors.add(hole.get());
                g.status = Status.FAILED;
            }
        }
        if (!errors.isEmpty()) {
            List<Diagnostic> all = new ArrayList<>(errors);
            all.sort(Comparator.comparing((Diagnostic d) -> d.span().isKnown() ? 0 : 1)
                    .thenComparing(d -> d.span().file())
                    .thenComparingInt(d -> d.span().line())
                    .thenComparingInt(d -> d.span().column()));
            all.addAll(warnings);
            throw new TypeException(all);
        }
    }

    private Diagnostic underConstrained(List<TypeSolver.Relation> rs) {
        TypeSolver.Relation first = rs.get(0);
        StringBuilder sb = new StringBuilder();
        sb.append(first.name).append(": under-constrained: cannot infer the types of this call (types ")
                .append(solver.resolve(new TupleType(first.types))).append(")");
        if (rs.size() > 1) {
            sb.append("; ").append(rs.size() - 1).append(" more unsolved call(s): ");
            for (int i = 1; i < Math.min(rs.size(), 6); i++) {
                if (i > 1) sb.append(", ");
                TypeSolver.Relation r = rs.get(i);
                sb.append(r.name).append(r.span.isKnown() ? " at " + r.span.line() + ":" + r.span.column() : "");
            }
            if (rs.size() > 6) sb.append(", ...");
        }
        return Diagnostic.error("under-constrained", first.span, first.global, sb.toString());
    }

    private Optional<Diagnostic> firstHole(Global g, UnaryOperator<Type> fin) {
        for (int i = 0; i < g.fn.params().size(); i++) {
            Var p = g.fn.params().get(i);
            Type t = fin.apply(varTypes.get(p));
            if (TypeSolver.hasHole(t)) {
                return Optional.of(Diagnostic.error("under-constrained", spanOr(p, g.fn), g.name,
                        "cannot infer the type of parameter %" + p.name() + " of @" + g.name + " (got " + t
                                + "); add a type annotation"));
            }
        }
        for (Expr e : g.visited) {
            Type t = fin.apply(types.get(e));
            if (TypeSolver.hasHole(t)) {
                return Optional.of(Diagnostic.error("under-constrained", spanOr(e, g.fn), g.name,
                        "cannot infer the type of " + describe(e) + " (got " + t + "); add a type annotation"));
            }
        }
        for (Var v : g.binders) {
            Type t = fin.apply(varTypes.get(v));
            if (TypeSolver.hasHole(t)) {
                return Optional.of(Diagnostic.error("under-constrained", spanOr(v, g.fn), g.name,
                        "cannot infer the type of %" + v.name() + " (got " + t + "); add a type annotation"));
            }
        }
        return Optional.empty();
    }

    private static Span spanOr(Expr e, Expr fallback) {
        return e.span().isKnown() ? e.span() : fallback.span();
    }

    // ---------------------------------------------------------------- result

    private InferResult buildResult(List<Global> checked, InferResult previous) {
        UnaryOperator<Type> fin = solver.finalizer();
        IdentityHashMap<Expr, Type> table = new IdentityHashMap<>();
        IdentityHashMap<Call, List<Type>> args = new IdentityHashMap<>();
        Map<GlobalVar, FuncType> globalTypes = new LinkedHashMap<>();
        List<Diagnostic> warns = new ArrayList<>();
        Set<String> rechecked = new java.util.HashSet<>();
        for (Global g : checked) rechecked.add(g.name);
        if (previous != null) {
            table.putAll(previous.types());
            args.putAll(previous.typeArgsTable());
            for (Global g : checked) {
                previous.module().function(g.name).ifPresent(old -> {
                    for (Expr e : ExprTraversal.postOrder(old)) {
                        table.remove(e);
                        if (e instanceof Call c) args.remove(c);
                    }
                });
            }
            for (Diagnostic d : previous.warnings()) if (!rechecked.contains(d.global())) warns.add(d);
        }
        warns.addAll(warnings);
        IRModule out = module;
        Map<GlobalVar, FuncType> checkedTypes = new HashMap<>();
        for (Global g : checked) {
            FuncType ft = (FuncType) fin.apply(g.sig);
            checkedTypes.put(g.gv, ft);
            out = out.withFunction(g.gv, annotate(g, ft, fin, table, args));
        }
        for (GlobalVar gv : module.functions().keySet()) {
            FuncType t = checkedTypes.get(gv);
            if (t == null && previous != null) t = previous.globalTypes().get(gv);
            if (t == null && globals.get(gv) != null && globals.get(gv).sig != null) t = (FuncType) fin.apply(globals.get(gv).sig);
            if (t != null) globalTypes.put(gv, t);
        }
        return new InferResult(out, table, globalTypes, warns, args);
    }

    /**
     * The global's function with missing parameter annotations and return type filled in; records
     * the final type of every node of the rebuilt function in {@code table}. Parameters are
     * {@link Var}s with identity, so annotating one means a new Var and rebuilding its uses.
     */
    private Function annotate(Global g, FuncType ft, UnaryOperator<Type> fin, IdentityHashMap<Expr, Type> table,
            IdentityHashMap<Call, List<Type>> args) {
        Function fn = g.fn;
        IdentityHashMap<Var, Var> renamed = new IdentityHashMap<>();
        List<Var> params = new ArrayList<>();
        for (int i = 0; i < fn.params().size(); i++) {
            Var p = fn.params().get(i);
            if (p.hasAnnotation()) {
                params.add(p);
            } else {
                Var np = Var.fresh(p.name(), ft.argTypes().get(i), p.span());
                renamed.put(p, np);
                params.add(np);
            }
        }
        Type ret = fn.retType() != null ? fn.retType() : ft.retType();
        Expr body;
        if (renamed.isEmpty()) {
            body = fn.body();
            for (Expr e : g.visited) table.put(e, fin.apply(types.get(e)));
            for (Expr e : ExprTraversal.postOrder(fn)) {
                if (e instanceof GlobalVar || e instanceof Constructor || e instanceof Op) {
                    Type t = types.get(e);
                    if (t != null) table.put(e, fin.apply(t));
                }
                if (e instanceof Call c && typeArgs.containsKey(c)) args.put(c, typeArgs.get(c).stream().map(fin).toList());
            }
        } else {
            ExprRewriter rw = new ExprRewriter() {
                @Override
                protected Expr rewrite(Expr pre, Expr post) {
                    Expr res = pre instanceof Var v && renamed.containsKey(v) ? renamed.get(v) : post;
                    Type t = types.get(pre);
                    if (t != null) table.put(res, fin.apply(t));
                    if (pre instanceof Call c && typeArgs.containsKey(c) && res instanceof Call rc) {
                        args.put(rc, typeArgs.get(c).stream().map(fin).toList());
                    }
                    return res;
                }
            };
            body = rw.rewrite(fn.body());
        }
        for (Var v : g.binders) table.put(renamed.getOrDefault(v, v), fin.apply(varTypes.get(v)));
        Function nf = renamed.isEmpty() && fn.retType() != null ? fn
                : new Function(params, body, ret, fn.typeParams(), fn.attrs(), fn.span());
        table.put(nf, ft);
        return nf;
    }

    // ---------------------------------------------------------------- the walk

    private void walk(Global g) {
        Function root = g.fn;
        Global owner = definitions.get(root);
        if (owner != g) {
            // Its Function node also defines @owner, checked before it (CallGraph makes this global
            // depend on @owner): one function, walked once, so this global only takes @owner's type.
            // Walking it again would find it seen and leave this signature's holes unconstrained.
            if ((owner.status == Status.FAILED || owner.status == Status.SKIPPED) && !owner.fullyAnnotated) throw new Skip();
            if (owner.sig == null) {
                throw fail(root, "unknown-global-type", "the type of @" + owner.name + " is not known; infer the whole module first");
            }
            expect(g.sig, owner.sig, root, (e, a) -> "@" + g.name + " is defined by the same function as @" + owner.name
                    + ", of type " + a + ", but its type is " + e);
            return;
        }
        if (!seen.add(root)) return;
        enter(root);
        stack.push(new Frame(root, Span.NONE));
        while (!stack.isEmpty()) {
            Frame f = stack.peek();
            if (f.next < f.kids.size()) {
                int i = f.next++;
                Expr child = f.kids.get(i);
                // References to globals, constructors and operators are typed per use by their parent;
                // so is another global's Function node used as a value (see definitions).
                if (isReference(child) || definitions.containsKey(child) || !seen.add(child)) {
                    afterChild(f.node, i);
                    continue;
                }
                enter(child);
                stack.push(new Frame(child, f.span));
            } else {
                // Exit while the frame is still on the stack, so errors find the nearest source position.
                Type t = exit(f.node);
                checkTypeSize(f.node, t);
                types.put(f.node, t);
                stack.pop();
                g.visited.add(f.node);
                Frame parent = stack.peek();
                if (parent != null) afterChild(parent.node, parent.next - 1);
            }
        }
    }

    private static boolean isReference(Expr e) {
        return e instanceof GlobalVar || e instanceof Constructor || e instanceof Op;
    }

    /** Before the children: bring binders into scope. */
    private void enter(Expr node) {
        // a let's variable is in scope in its value too: recursive local functions
        Binders.forEach(node, this::bind);
    }

    private void bind(Var v) {
        varType(v);
        if (bound.add(v)) current.binders.add(v);
    }

    private Type varType(Var v) {
        Type t = varTypes.get(v);
        if (t == null) {
            t = v.hasAnnotation() ? v.annotation() : solver.fresh();
            varTypes.put(v, t);
        }
        return t;
    }

    /** Between children: constraints whose early check gives a better first error. */
    private void afterChild(Expr parent, int index) {
        if (index != 0) return;
        switch (parent) {
            case Let l -> {
                Type value = typeOfChild(l.value());
                expect(varType(l.var()), value, l,
                        (e, a) -> "let %" + l.var().name() + ": the value has type " + a + ", but the variable is declared " + e);
            }
            case If i -> {
                Type cond = typeOfChild(i.cond());
                expect(BOOL_SCALAR, cond, i.cond(),
                        (e, a) -> "if condition must be a bool scalar (Tensor[(), bool]), got " + a);
            }
            case Match m -> {
                Type data = typeOfChild(m.data());
                for (Clause c : m.clauses()) typePattern(c.pattern(), data, m);
            }
            default -> {}
        }
    }

    /** The type of a child already walked, or of a reference instantiated for this use. */
    private Type typeOfChild(Expr child) {
        return switch (child) {
            case GlobalVar g -> globalUse(g, child).type();
            case Constructor c -> constructorUse(c, false).type();
            case Op o -> throw fail(o, "op-as-value", "operator " + o.name() + " used as a value; call it instead");
            case Function f when definitions.containsKey(f) -> globalUse(definitions.get(f).gv, child).type();
            default -> {
                Type t = types.get(child);
                // Seen but untyped: a node shared with (DAG sharing, legal) a global whose check
                // failed or was skipped mid-walk, before reaching this node's exit. That error is
                // already reported; checking this component would only repeat it, as with Skip.
                if (t == null) throw new Skip();
                yield t;
            }
        };
    }

    /** After the children: the node's type. */
    private Type exit(Expr node) {
        return switch (node) {
            case Var v -> {
                if (!bound.contains(v)) {
                    throw fail(v, "unbound-variable", "unbound variable %" + v.name());
                }
                yield varType(v);
            }
            case Constant c -> c.type();
            case Tuple t -> new TupleType(t.fields().stream().map(this::typeOfChild).toList());
            case TupleGetItem t -> projection(t);
            case Let l -> typeOfChild(l.body());
            case If i -> {
                Type then = typeOfChild(i.thenBranch());
                Type other = typeOfChild(i.elseBranch());
                yield expect(then, other, i,
                        (e, a) -> "if branches have different types: then branch is " + e + ", else branch is " + a);
            }
            case Function f -> functionType(f);
            case Call c -> call(c);
            case Match m -> match(m);
            case RefCreate r -> new RefType(typeOfChild(r.value()));
            case RefRead r -> {
                IncompleteType v = solver.fresh();
                expect(new RefType(v), typeOfChild(r.ref()), r, (e, a) -> "ref_read expects a reference, got " + a);
                yield v;
            }
            case RefWrite r -> {
                Type value = typeOfChild(r.value());
                expect(typeOfChild(r.ref()), new RefType(value), r,
                        (e, a) -> "ref_write: the reference has type " + e + ", but the value written has type "
                                + solver.resolve(value));
                yield TupleType.UNIT;
            }
            case GlobalVar g -> globalUse(g, g).type();
            case Constructor c -> constructorUse(c, false).type();
            case Op o -> throw fail(o, "op-as-value", "operator " + o.name() + " used as a value; call it instead");
        };
    }

    private Type functionType(Function f) {
        List<Type> params = f.params().stream().map(this::varType).toList();
        Type body = typeOfChild(f.body());
        Type ret;
        if (current != null && f == current.fn) {
            ret = current.sig.retType();
            expect(ret, body, f, (e, a) -> "@" + current.name + " returns " + a + ", but its return type is " + e);
        } else if (f.retType() != null) {
            ret = f.retType();
            expect(ret, body, f, (e, a) -> "function body has type " + a + ", but the function's return type is " + e);
        } else {
            ret = body;
        }
        return new FuncType(f.typeParams(), params, ret, List.of());
    }

    private Type projection(TupleGetItem t) {
        Type tuple = typeOfChild(t.tuple());
        Type known = solver.shallow(tuple);
        if (known instanceof TupleType tt) {
            checkIndex(t.index(), tt).ifPresent(msg -> {
                throw fail(t, "tuple-index", msg);
            });
            return tt.fields().get(t.index());
        }
        if (!(known instanceof IncompleteType)) {
            throw fail(t, "not-a-tuple", "cannot project field ." + t.index() + " from a value of type " + solver.resolve(known)
                    + ": not a tuple");
        }
        // The tuple's type is not known yet: defer to a relation.
        IncompleteType out = solver.fresh();
        int index = t.index();
        solver.addRelation("tuple projection ." + index, List.of(tuple, out), (ts, reporter) -> {
            Type tt = ts.get(0);
            if (tt instanceof IncompleteType) return false;
            if (!(tt instanceof TupleType tup)) {
                throw new RelationException("cannot project field ." + index + " from a value of type " + tt + ": not a tuple");
            }
            Optional<String> bad = checkIndex(index, tup);
            if (bad.isPresent()) throw new RelationException(bad.get());
            reporter.assign(ts.get(1), tup.fields().get(index));
            return true;
        }, spanOf(t), current.name);
        return out;
    }

    private static Optional<String> checkIndex(int index, TupleType tt) {
        if (index >= 0 && index < tt.fields().size()) return Optional.empty();
        return Optional.of("tuple index " + index + " is out of bounds for " + tt + ", which has "
                + TypeSolver.plural(tt.fields().size(), "field"));
    }

    private Type call(Call c) {
        Expr callee = c.callee();
        List<Type> argTypes = c.args().stream().map(this::typeOfChild).toList();
        if (callee instanceof Op op) return opCall(c, op, argTypes);
        String name = describeCallee(callee);
        Type calleeType;
        switch (callee) {
            case GlobalVar g -> {
                Instance inst = globalUse(g, c);
                calleeType = inst.type();
                if (!inst.args().isEmpty()) typeArgs.put(c, inst.args());
            }
            case Constructor k -> {
                Instance inst = constructorUse(k, true);
                calleeType = inst.type();
                if (!inst.args().isEmpty()) typeArgs.put(c, inst.args());
            }
            default -> calleeType = typeOfChild(callee);
        }
        Type known = solver.shallow(calleeType);
        if (known instanceof FuncType ft) {
            if (!ft.typeParams().isEmpty()) {
                Instance inst = instantiate(ft);
                ft = (FuncType) inst.type();
                typeArgs.put(c, inst.args());
            }
            if (ft.argTypes().size() != argTypes.size()) {
                throw fail(c, "arity", name + " expects " + TypeSolver.plural(ft.argTypes().size(), "argument") + ", got "
                        + argTypes.size() + " (its type is " + solver.resolve(ft) + ")");
            }
            for (int i = 0; i < argTypes.size(); i++) {
                int n = i + 1;
                expect(ft.argTypes().get(i), argTypes.get(i), c.args().get(i),
                        (e, a) -> "argument " + n + " of " + name + ": expected " + e + ", got " + a);
            }
            return ft.retType();
        }
        if (known instanceof IncompleteType) {
            IncompleteType ret = solver.fresh();
            expect(calleeType, new FuncType(argTypes, ret), c,
                    (e, a) -> "call of " + name + " as " + a + " does not match its type " + e);
            return ret;
        }
        throw fail(c, "not-a-function", name + " is not a function: it has type " + solver.resolve(known));
    }

    private Type opCall(Call c, Op op, List<Type> argTypes) {
        OpDef<?> def = ops.find(op.name())
                .orElseThrow(() -> fail(c, "unknown-op", "unknown operator '" + op.name() + "'"));
        if (def.numInputs() >= 0 && def.numInputs() != argTypes.size()) {
            throw fail(c, "arity", op.name() + " expects " + TypeSolver.plural(def.numInputs(), "argument") + ", got "
                    + argTypes.size());
        }
        TypeSolver.Rule rule;
        try {
            rule = boundRule(def, c);
        } catch (RelationException e) {
            throw fail(c, "relation", withOpName(op.name(), e.getMessage()));
        }
        IncompleteType out = solver.fresh();
        List<Type> relTypes = new ArrayList<>(argTypes);
        relTypes.add(out);
        solver.addRelation(op.name(), relTypes, rule, spanOf(c), current.name);
        types.put(op, new FuncType(argTypes, out));
        return out;
    }

    /** The op's relation with the call's attributes parsed once (an attribute error surfaces here). */
    private static <A> TypeSolver.Rule boundRule(OpDef<A> def, Call c) {
        A attrs = def.parseAttrs(c.attrs());
        return (ts, reporter) -> def.solve(ts, attrs, reporter);
    }

    private Type match(Match m) {
        Type result = null;
        for (int i = 0; i < m.clauses().size(); i++) {
            Expr body = m.clauses().get(i).body();
            Type t = typeOfChild(body);
            if (result == null) {
                result = t;
            } else {
                int n = i + 1;
                result = expect(result, t, body,
                        (e, a) -> "match clauses have different types: clause 1 is " + e + ", clause " + n + " is " + a);
            }
        }
        if (m.complete()) {
            Optional<String> missing = Exhaustiveness.uncovered(module,
                    m.clauses().stream().map(Clause::pattern).toList());
            missing.ifPresent(w -> warnings.add(Diagnostic.warning("non-exhaustive", spanOf(m), current.name,
                    "match is not exhaustive: " + w + " is not covered (use match? to allow this)")));
        }
        return result != null ? result : solver.fresh();
    }

    private void typePattern(Pattern p, Type t, Match m) {
        switch (p) {
            case Pattern.Wildcard w -> {}
            case Pattern.Bind b -> expect(varType(b.var()), t, m,
                    (e, a) -> "pattern variable %" + b.var().name() + " is declared " + e + ", but the matched value has type " + a);
            case Pattern.Ctor c -> {
                Constructor k = c.constructor();
                if (c.args().size() != k.inputs().size()) {
                    throw fail(m, "arity", "constructor " + k.name() + " has " + TypeSolver.plural(k.inputs().size(), "field")
                            + ", but the pattern gives " + c.args().size());
                }
                FuncType ft = (FuncType) constructorUse(k, true).type();
                expect(t, ft.retType(), m,
                        (e, a) -> "pattern " + k.name() + " matches values of type " + a + ", but the matched value has type " + e);
                for (int i = 0; i < c.args().size(); i++) typePattern(c.args().get(i), ft.argTypes().get(i), m);
            }
            case Pattern.TuplePattern tp -> {
                List<Type> fields = new ArrayList<>();
                for (int i = 0; i < tp.fields().size(); i++) fields.add(solver.fresh());
                expect(t, new TupleType(fields), m,
                        (e, a) -> "tuple pattern of " + TypeSolver.plural(fields.size(), "field")
                                + " does not match the matched value's type " + e);
                for (int i = 0; i < fields.size(); i++) typePattern(tp.fields().get(i), fields.get(i), m);
            }
        }
    }

    // ---------------------------------------------------------------- references

    private Instance globalUse(GlobalVar gv, Expr site) {
        Global g = globals.get(gv);
        if (g == null) throw fail(site, "unbound-global", "unbound global @" + gv.name() + " (no such function in the module)");
        if ((g.status == Status.FAILED || g.status == Status.SKIPPED) && !g.fullyAnnotated) throw new Skip();
        if (g.sig == null) {
            throw fail(site, "unknown-global-type", "the type of @" + gv.name() + " is not known; infer the whole module first");
        }
        types.put(gv, g.sig);
        FuncType sig = g.sig;
        if (sig.typeParams().isEmpty()) return new Instance(sig, List.of());
        boolean generalized = g.status == Status.DONE || g.status == Status.KNOWN || g.fullyAnnotated;
        if (generalized) return instantiate((FuncType) solver.resolve(sig));
        if (g == current) {
            // Unannotated recursion inside a polymorphic function: its type variables are still rigid here.
            return new Instance(new FuncType(sig.argTypes(), sig.retType()), List.of());
        }
        throw fail(site, "annotation-required", "@" + g.name + " is polymorphic and mutually recursive with @" + current.name
                + "; annotate all of its parameter types and its return type");
    }

    private Instance constructorUse(Constructor c, boolean asCallee) {
        TypeData td = module.types().get(c.belongsTo());
        if (td == null) {
            throw fail(c, "unbound-type", "constructor " + c.name() + " belongs to unknown type " + c.belongsTo().name());
        }
        Map<TypeVar, Type> subst = new HashMap<>();
        List<Type> args = new ArrayList<>();
        for (TypeVar v : td.typeParams()) {
            IncompleteType h = solver.fresh();
            subst.put(v, h);
            args.add(h);
        }
        Type adt = td.typeParams().isEmpty() ? td.header() : new TypeCall(td.header(), args);
        List<Type> inputs = c.inputs().stream().map(t -> TypeSolver.substitute(t, subst)).toList();
        Type generic = td.typeParams().isEmpty() ? td.header() : new TypeCall(td.header(), List.copyOf(td.typeParams()));
        types.put(c, new FuncType(td.typeParams(), c.inputs(), generic, List.of()));
        // A nullary constructor written without a call (Nil) is the value itself.
        Type type = !asCallee && inputs.isEmpty() ? adt : new FuncType(inputs, adt);
        return new Instance(type, args);
    }

    private Instance instantiate(FuncType ft) {
        Map<TypeVar, Type> subst = new HashMap<>();
        List<Type> args = new ArrayList<>();
        for (TypeVar v : ft.typeParams()) {
            IncompleteType h = solver.fresh();
            subst.put(v, h);
            args.add(h);
        }
        FuncType mono = new FuncType(List.of(), ft.argTypes(), ft.retType(), ft.constraints());
        return new Instance(TypeSolver.substitute(mono, subst), args);
    }

    // ---------------------------------------------------------------- diagnostics

    /** Unifies or fails with a message built from the resolved types (expected, actual). */
    private Type expect(Type expected, Type actual, Expr at, java.util.function.BinaryOperator<String> message) {
        try {
            return solver.unify(expected, actual);
        } catch (TypeSolver.UnifyException e) {
            String exp = solver.resolve(expected).toString();
            String act = solver.resolve(actual).toString();
            String detail = e.getMessage();
            String msg = message.apply(exp, act);
            boolean informative = e.nested || e.informative;
            if (informative && detail != null && !detail.equals(exp + " vs " + act) && !msg.contains(detail)) {
                msg += " (" + detail + ")";
            }
            throw fail(at, "type-mismatch", msg);
        }
    }

    /**
     * Bounds on the types a program builds. Bindings make types grow without any syntactic nesting:
     * {@code let %1 = (%0, %0); let %2 = (%1, %1); ...} doubles the type per binding (26 of them: 67 million
     * components, and every walk over types — solving, printing, JSON — took minutes), and {@code let %1 = (%0,); ...}
     * deepens it per binding until the recursive type walks overflow the stack (50,000 of them did). Each expression's
     * type is measured as it is computed, from the cached measures of its parts, so the check itself stays linear.
     * No real model comes near: a model's types are tensors, tuples of outputs, and functions of those.
     */
    /** The JSON IR's nesting limit ({@code IrJson.MAX_NESTING_DEPTH}): a typed module travels to the next stage as JSON. */
    static final int MAX_TYPE_DEPTH = 128;
    static final long MAX_TYPE_COMPONENTS = 100_000;
    /** {components, depth} of the types measured so far, by identity: parts of one type are shared, not copied. */
    private final IdentityHashMap<Type, long[]> typeMeasures = new IdentityHashMap<>();

    private void checkTypeSize(Expr node, Type t) {
        long[] m = measure(t, 0);
        if (m[1] > MAX_TYPE_DEPTH) {
            throw fail(node, "type-too-large", "the type of this expression nests more than " + MAX_TYPE_DEPTH + " levels deep (the limit)");
        }
        if (m[0] > MAX_TYPE_COMPONENTS) {
            throw fail(node, "type-too-large", "the type of this expression has more than " + MAX_TYPE_COMPONENTS + " components (the limit)");
        }
    }

    /** {components, depth} of {@code t}, looking through solved holes; the walk stops past the depth limit. */
    private long[] measure(Type t, int level) {
        Type s = solver.shallow(t);
        long[] known = typeMeasures.get(s);
        if (known != null) return known;
        if (level > MAX_TYPE_DEPTH) return new long[] {1, MAX_TYPE_DEPTH + 1};
        List<Type> parts = switch (s) {
            case TupleType tt -> tt.fields();
            case FuncType f -> {
                List<Type> all = new ArrayList<>(f.argTypes());
                all.add(f.retType());
                yield all;
            }
            case TypeCall c -> c.args();
            case RefType r -> List.of(r.value());
            case TensorType tt -> List.of();
            case TypeVar v -> List.of();
            case GlobalTypeVar g -> List.of();
            case IncompleteType i -> List.of();
        };
        long size = 1, depth = 0;
        for (Type p : parts) {
            long[] m = measure(p, level + 1);
            size = Math.min(MAX_TYPE_COMPONENTS + 1, size + m[0]);
            depth = Math.max(depth, m[1]);
        }
        long[] m = {size, depth + 1};
        if (depth + 1 <= MAX_TYPE_DEPTH) typeMeasures.put(s, m);
        return m;
    }

    private CheckFailure fail(Expr at, String code, String message) {
        return new CheckFailure(Diagnostic.error(code, spanOf(at), current == null ? "" : current.name, message));
    }

    private Diagnostic relationDiagnostic(TypeSolver.Relation r, String message) {
        boolean projection = r.name.startsWith("tuple projection");
        return Diagnostic.error(projection ? "tuple-index" : "relation", r.span, r.global,
                projection ? message : withOpName(r.name, message));
    }

    /** {@code "nn.conv2d: " + message}, unless the relation already named its operator. */
    private static String withOpName(String op, String message) {
        return message.startsWith(op + ":") ? message : op + ": " + message;
    }

    /** The node's position, or that of the nearest enclosing node being walked that has one. */
    private Span spanOf(Expr e) {
        Frame top = stack.peek();
        // A Var node is shared by its binder and all its uses, so its span is the declaration's:
        // for a use, the enclosing expression's position is the better one.
        if (e instanceof Var && top != null && top.node != e && top.span.isKnown()) return top.span;
        if (e.span().isKnown()) return e.span();
        if (top != null && top.span.isKnown()) return top.span;
        return current != null ? current.fn.span() : Span.NONE;
    }

    private static String describeCallee(Expr callee) {
        return switch (callee) {
            case GlobalVar g -> "@" + g.name();
            case Var v -> "%" + v.name();
            case Constructor c -> "constructor " + c.name();
            case Op o -> o.name();
            case Function f -> "the function";
            default -> "the callee";
        };
    }

    private static String describe(Expr e) {
        return switch (e) {
            case Var v -> "%" + v.name();
            case GlobalVar g -> "@" + g.name();
            case Call c -> "the call of " + describeCallee(c.callee());
            case Let l -> "let %" + l.var().name();
            case Function f -> "the function";
            case Match m -> "the match";
            case If i -> "the if";
            case Tuple t -> "the tuple";
            case TupleGetItem t -> "the projection ." + t.index();
            case Constant c -> "the constant";
            case Constructor c -> "constructor " + c.name();
            case Op o -> "operator " + o.name();
            case RefCreate r -> "ref(...)";
            case RefRead r -> "ref_read(...)";
            case RefWrite r -> "ref_write(...)";
        };
    }
}
