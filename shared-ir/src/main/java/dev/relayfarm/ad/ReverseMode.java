package dev.relayfarm.ad;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.IncompleteType;
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
import dev.relayfarm.types.InferResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Higher-order reverse-mode AD over the whole language, the Relay way (Roesch et al., "Relay: a
 * high-level compiler for deep learning", §4.2; TVM's {@code gradient(mode="higher_order")}):
 * <ul>
 *   <li>every tensor value becomes a pair {@code (value, ref adjoint)}, the adjoint cell starting at
 *       zeros; the lifting goes through types ({@code Tensor -> (Tensor, Ref[Tensor])}, tuples, functions,
 *       references and ADT arguments field by field), so closures, lists of tensors and reference cells
 *       carry their adjoints with them;
 *   <li>a single cell {@code %bp} holds the backpropagator, a closure {@code fn () -> ()}; each operator
 *       call computes its primal result and then replaces {@code %bp} by a closure that reads the result's
 *       adjoint, adds the operator's {@link OpGradient} contributions into its arguments' adjoint cells,
 *       and calls the previous backpropagator — the tape is this chain of closures, built while the program
 *       runs, so {@code if}, {@code match}, recursion and loops record exactly the path taken;
 *   <li>each global function gets a reversed copy {@code @f_reverse} taking {@code %bp} first; closures
 *       capture it lexically.
 * </ul>
 * The result (TVM's convention) is a module whose {@code @main} takes the original parameters and returns
 * {@code (f(x...), (df/dx...))}: it seeds the output's adjoints with ones (a non-scalar output yields the
 * gradient of its sum), runs the backpropagator and reads the parameters' adjoint cells.
 *
 * <pre>
 * def @main(%x: float32) { multiply(%x, %x) }
 *   ==>  def @main(%x) { let %bp = ref(fn () { () }); let %x1 = (%x, ref(zeros_like(%x)));
 *                        let %r = @main_reverse(%bp, %x1); ...; (!%bp)(); (%r.0, (!%x1.1,)) }
 * </pre>
 *
 * The program is brought to A-normal form first, so the walk recurses only through nested scopes (function
 * bodies, branches), never along a chain of bindings. Partial evaluation then unrolls the closure chain of a
 * first-order program into plain dataflow ({@link GradientPipeline}, {@code relayc grad --simplify}). Not done: ADTs whose constructor
 * fields name tensor types directly (make them type parameters, like {@code List[A]}); parameters of
 * non-tensor types in the differentiated global.
 */
public final class ReverseMode {
    private static final Type BACKPROP = new RefType(new FuncType(List.of(), TupleType.UNIT));

    private final InferResult typed;
    private final RuleTable<OpGradient> gradients;
    private final Map<Var, Var> vars = new IdentityHashMap<>();
    private final Map<GlobalVar, GlobalVar> reversed = new LinkedHashMap<>();
    private final Map<GlobalVar, Function> reversedFunctions = new LinkedHashMap<>();
    private final Deque<GlobalVar> pending = new ArrayDeque<>();
    private final Map<GlobalTypeVar, Boolean> liftableData = new java.util.HashMap<>();
    private Var bp;

    private ReverseMode(InferResult typed, RuleTable<OpGradient> gradients) {
        this.typed = typed;
        this.gradients = gradients;
    }

    /** The gradient of {@code global} with respect to all its parameters, as the {@code @main} of a new module. */
    public static IRModule gradient(IRModule module, String global) {
        return gradient(module, global, List.of());
    }

    /**
     * The gradient of {@code global} with respect to the parameters named in {@code wrt} (all when empty), as the
     * {@code @main} of a new module: same parameters, result {@code (f(x...), (df/dw...))} with one adjoint per
     * named parameter, in parameter order.
     */
    public static IRModule gradient(IRModule module, String global, List<String> wrt) {
        InferResult typed = AdPrograms.typedAnf(module);
        GlobalVar gv = AdPrograms.global(typed, global, "gradient");
        ReverseMode ad = new ReverseMode(typed, OpGradients.get());
        Function main = ad.wrapper(gv, wrt);
        while (!ad.pending.isEmpty()) ad.reverseGlobal(ad.pending.pop());
        Map<GlobalVar, Function> functions = new LinkedHashMap<>();
        functions.put(new GlobalVar("main"), main);
        functions.putAll(ad.reversedFunctions);
        return AdPrograms.typed(IRModule.of(functions, typed.module().types()), "the gradient of @" + global);
    }

    // ---------------------------------------------------------------- the gradient's @main

    private Function wrapper(GlobalVar gv, List<String> wrt) {
        Function f = typed.module().lookup(gv);
        for (String name : wrt) {
            if (f.params().stream().noneMatch(p -> p.name().equals(name))) {
                throw new GradientException("gradient: @" + gv.name() + " has no parameter %" + name + " (--wrt)");
            }
        }
        Bindings b = new Bindings();
        bp = b.let("bp", new RefCreate(new Function(List.of(), new Tuple(List.of()), TupleType.UNIT)));
        List<Var> params = new ArrayList<>();
        List<Expr> lifted = new ArrayList<>();
        List<Expr> grads = new ArrayList<>();
        List<Type> gradTypes = new ArrayList<>();
        for (Var p : f.params()) {
            Type t = typed.typeOf(p);
            if (!AdPrograms.isTensorTree(t)) {
                throw new GradientException("gradient: parameter %" + p.name() + " of @" + gv.name() + " has type " + t
                        + "; the differentiated function's parameters must be tensors or tuples of tensors" + AdPrograms.at(p.span()));
            }
            Var np = Var.fresh(p.name(), t, p.span());
            params.add(np);
            Var l = b.let(p.name(), lift(np, t));
            lifted.add(l);
            if (wrt.isEmpty() || wrt.contains(p.name())) {
                grads.add(adjoint(l, t));
                gradTypes.add(t);
            }
        }
        Type ret = ((FuncType) typed.typeOf(gv)).retType();
        if (!AdPrograms.isTensorTree(ret)) {
            throw new GradientException("gradient: @" + gv.name() + " returns " + ret + "; it must return a tensor or a tuple of tensors");
        }
        List<Expr> args = new ArrayList<>();
        args.add(bp);
        args.addAll(lifted);
        Var r = b.let("r", new Call(reverse(gv), args));
        seed(r, ret, b);
        b.let("_", new Call(new RefRead(bp), List.of()));
        Expr result = new Tuple(List.of(primal(r, ret), new Tuple(grads)));
        return new Function(params, b.wrap(result), new TupleType(List.of(ret, new TupleType(gradTypes))), List.of(), Attrs.EMPTY, f.span());
    }

    /** Adds ones to every tensor adjoint of the output: the gradient of the sum of its elements. */
    private void seed(Expr lifted, Type t, Bindings b) {
        switch (t) {
            case TensorType tt -> accumulate(lifted, Grads.call("ones_like", new TupleGetItem(lifted, 0)), t, b);
            case TupleType tu -> {
                for (int i = 0; i < tu.fields().size(); i++) seed(new TupleGetItem(lifted, i), tu.fields().get(i), b);
            }
            default -> throw new IllegalStateException("not a tensor tree: " + t);
        }
    }

    // ---------------------------------------------------------------- globals

    private GlobalVar reverse(GlobalVar gv) {
        return reversed.computeIfAbsent(gv, g -> {
            pending.push(g);
            String name = g.name() + "_reverse";
            while (typed.module().function(name).isPresent()) name += "_";
            return new GlobalVar(name);
        });
    }

    private void reverseGlobal(GlobalVar gv) {
        Function f = typed.module().lookup(gv);
        bp = Var.fresh("bp", BACKPROP);
        List<Var> params = new ArrayList<>();
        params.add(bp);
        for (Var p : f.params()) params.add(bindParam(p));
        FuncType ft = (FuncType) typed.typeOf(gv);
        Expr body = block(f.body());
        reversedFunctions.put(reversed.get(gv), new Function(params, body, liftType(ft.retType()), f.typeParams(), Attrs.EMPTY, f.span()));
    }

    private Var bindParam(Var p) {
        Var np = Var.fresh(p.name(), liftType(typed.typeOf(p)), p.span());
        vars.put(p, np);
        return np;
    }

    // ---------------------------------------------------------------- expressions

    /** A scope (function body, branch, clause): its chain of bindings is walked in a loop. */
    private Expr block(Expr e) {
        Bindings b = new Bindings();
        Expr cur = e;
        while (cur instanceof Let l) {
            Var nv = Var.fresh(l.var().name(), null, l.var().span());
            vars.put(l.var(), nv); // before the value: a let-bound function may call itself
            b.bind(nv, value(l.value(), b));
            cur = l.body();
        }
        return b.wrap(value(cur, b));
    }

    private Expr atom(Expr e, Bindings b) {
        return switch (e) {
            case Var v -> value(v, b);
            case Constructor c -> c;
            default -> b.let("a", value(e, b));
        };
    }

    private List<Expr> atoms(List<Expr> es, Bindings b) {
        List<Expr> out = new ArrayList<>(es.size());
        for (Expr e : es) out.add(atom(e, b));
        return out;
    }

    private Expr value(Expr e, Bindings b) {
        return switch (e) {
            case Var v -> {
                Var nv = vars.get(v);
                if (nv == null) throw new IllegalStateException("gradient: unbound variable %" + v.name() + AdPrograms.at(v.span()));
                yield nv;
            }
            case GlobalVar g -> {
                // A global used as a value: a closure over the reversed global and the current backpropagator.
                FuncType ft = (FuncType) typed.typeOf(g);
                List<Var> ps = new ArrayList<>();
                List<Expr> args = new ArrayList<>();
                args.add(bp);
                for (Type t : ft.argTypes()) {
                    Var p = Var.fresh("p", liftType(t));
                    ps.add(p);
                    args.add(p);
                }
                yield new Function(ps, new Call(reverse(g), args), liftType(ft.retType()), ft.typeParams(), Attrs.EMPTY, Span.NONE);
            }
            case Constant c -> lift(c, c.type());
            case Op o -> throw new GradientException("gradient: operator " + o.name() + " used as a value; only calls of operators can be differentiated");
            case Constructor c -> {
                checkLiftable(c.belongsTo());
                yield c;
            }
            case Tuple t -> new Tuple(atoms(t.fields(), b));
            case TupleGetItem t -> new TupleGetItem(atom(t.tuple(), b), t.index());
            case Let l -> block(l);
            case If i -> new If(new TupleGetItem(atom(i.cond(), b), 0), block(i.thenBranch()), block(i.elseBranch()));
            case Function f -> {
                if (f.isPrimitive()) throw new GradientException("gradient: a fused (Primitive) function cannot be differentiated; differentiate before fuse-ops");
                List<Var> ps = new ArrayList<>();
                for (Var p : f.params()) ps.add(bindParam(p));
                FuncType ft = (FuncType) typed.typeOf(f);
                yield new Function(ps, block(f.body()), liftType(ft.retType()), f.typeParams(), f.attrs(), f.span());
            }
            case Call c -> switch (c.callee()) {
                case Op op -> operatorCall(c, op, b);
                case GlobalVar g -> {
                    List<Expr> args = new ArrayList<>();
                    args.add(bp);
                    args.addAll(atoms(c.args(), b));
                    yield new Call(reverse(g), args, Attrs.EMPTY, List.of(), c.span());
                }
                case Constructor k -> {
                    checkLiftable(k.belongsTo());
                    yield new Call(k, atoms(c.args(), b), Attrs.EMPTY, List.of(), c.span());
                }
                default -> new Call(atom(c.callee(), b), atoms(c.args(), b), Attrs.EMPTY, List.of(), c.span());
            };
            case Match m -> {
                Expr data = atom(m.data(), b);
                List<Clause> clauses = new ArrayList<>();
                for (Clause cl : m.clauses()) clauses.add(new Clause(pattern(cl.pattern()), block(cl.body())));
                yield new Match(data, clauses, m.complete(), m.span());
            }
            case RefCreate r -> new RefCreate(atom(r.value(), b));
            case RefRead r -> new RefRead(atom(r.ref(), b));
            case RefWrite r -> new RefWrite(atom(r.ref(), b), atom(r.value(), b));
        };
    }

    private Pattern pattern(Pattern p) {
        return switch (p) {
            case Pattern.Wildcard w -> w;
            case Pattern.Bind bind -> {
                Var nv = Var.fresh(bind.var().name(), null, bind.var().span());
                vars.put(bind.var(), nv);
                yield new Pattern.Bind(nv);
            }
            case Pattern.Ctor c -> {
                checkLiftable(c.constructor().belongsTo());
                yield new Pattern.Ctor(c.constructor(), c.args().stream().map(this::pattern).toList());
            }
            case Pattern.TuplePattern t -> new Pattern.TuplePattern(t.fields().stream().map(this::pattern).toList());
        };
    }

    /**
     * {@code op(args)}: the primal call on the arguments' values, its result lifted with fresh adjoint cells, and
     * (unless the operator is piecewise constant) a new backpropagator that runs the operator's rule and then the
     * previous one.
     */
    private Expr operatorCall(Call c, Op op, Bindings b) {
        List<Expr> lifted = atoms(c.args(), b);
        List<Var> primals = new ArrayList<>();
        List<Type> argTypes = new ArrayList<>();
        for (int i = 0; i < lifted.size(); i++) {
            Type t = typed.typeOf(c.args().get(i));
            argTypes.add(t);
            primals.add(b.let("x", primal(lifted.get(i), t)));
        }
        Type outType = typed.typeOf(c);
        Var y = b.let("y", new Call(op, new ArrayList<>(primals), c.attrs(), List.of(), c.span()));
        Var out = b.let("v", lift(y, outType));
        // A piecewise-constant operator, or one on integers only (loop counters, shapes), passes no adjoint back.
        if (gradients.isConstant(op.name()) || argTypes.stream().noneMatch(ReverseMode::hasFloat)) return out;
        OpGradient rule = gradients.rule(op.name()).orElseThrow(() -> new GradientException(
                "gradient: no gradient registered for operator " + op.name() + AdPrograms.at(c.span())));
        Var previous = b.let("bp_prev", new RefRead(bp));
        Bindings k = new Bindings();
        Var g = k.let("g", adjoint(out, outType));
        List<Expr> grads;
        try {
            grads = rule.backward(new GradientCall(c, primals, argTypes, y, outType), g);
        } catch (GradientException | dev.relayfarm.ops.RelationException e) {
            throw new GradientException((e.getMessage().startsWith("gradient") ? "" : "gradient: ") + e.getMessage() + AdPrograms.at(c.span()));
        }
        if (grads.size() != lifted.size()) {
            throw new IllegalStateException("gradient rule of " + op.name() + " gave " + grads.size() + " adjoints for " + lifted.size() + " arguments");
        }
        for (int i = 0; i < grads.size(); i++) {
            if (grads.get(i) != null) accumulate(lifted.get(i), k.let("d", grads.get(i)), argTypes.get(i), k);
        }
        Expr backprop = new Function(List.of(), k.wrap(new Call(previous, List.of())), TupleType.UNIT);
        b.let("_", new RefWrite(bp, backprop));
        return out;
    }

    // ---------------------------------------------------------------- lifting values and types

    /** {@code (v, ref(zeros_like(v)))} for a tensor, field by field for a tuple. */
    private Expr lift(Expr v, Type t) {
        return switch (t) {
            case TensorType tt -> new Tuple(List.of(v, new RefCreate(Grads.call("zeros_like", v))));
            case TupleType tu -> {
                List<Expr> fields = new ArrayList<>();
                for (int i = 0; i < tu.fields().size(); i++) fields.add(lift(new TupleGetItem(v, i), tu.fields().get(i)));
                yield new Tuple(fields);
            }
            default -> throw new GradientException("gradient: an operator result of type " + t + " cannot be lifted");
        };
    }

    private static Expr primal(Expr lifted, Type t) {
        return switch (t) {
            case TensorType tt -> new TupleGetItem(lifted, 0);
            case TupleType tu -> {
                List<Expr> fields = new ArrayList<>();
                for (int i = 0; i < tu.fields().size(); i++) fields.add(primal(new TupleGetItem(lifted, i), tu.fields().get(i)));
                yield new Tuple(fields);
            }
            default -> throw new GradientException("gradient: an operator argument of type " + t + " is not a tensor or tuple of tensors");
        };
    }

    private static Expr adjoint(Expr lifted, Type t) {
        return switch (t) {
            case TensorType tt -> new RefRead(new TupleGetItem(lifted, 1));
            case TupleType tu -> {
                List<Expr> fields = new ArrayList<>();
                for (int i = 0; i < tu.fields().size(); i++) fields.add(adjoint(new TupleGetItem(lifted, i), tu.fields().get(i)));
                yield new Tuple(fields);
            }
            default -> throw new IllegalStateException("not a tensor tree: " + t);
        };
    }

    /** {@code adj := adj + grad} for each tensor of {@code lifted}. */
    private static void accumulate(Expr lifted, Expr grad, Type t, Bindings k) {
        switch (t) {
            case TensorType tt -> {
                Expr cell = new TupleGetItem(lifted, 1);
                k.let("_", new RefWrite(cell, Grads.call("add", new RefRead(cell), grad)));
            }
            case TupleType tu -> {
                for (int i = 0; i < tu.fields().size(); i++) {
                    accumulate(new TupleGetItem(lifted, i), new TupleGetItem(grad, i), tu.fields().get(i), k);
                }
            }
            default -> throw new IllegalStateException("not a tensor tree: " + t);
        }
    }

    private Type liftType(Type t) {
        return switch (t) {
            case TensorType tt -> new TupleType(List.of(tt, new RefType(tt)));
            case TupleType tu -> new TupleType(tu.fields().stream().map(this::liftType).toList());
            case FuncType f -> new FuncType(f.typeParams(), f.argTypes().stream().map(this::liftType).toList(), liftType(f.retType()), List.of());
            case RefType r -> new RefType(liftType(r.value()));
            case TypeVar v -> v;
            case GlobalTypeVar g -> {
                checkLiftable(g);
                yield g;
            }
            case TypeCall tc -> {
                if (tc.func() instanceof GlobalTypeVar g) checkLiftable(g);
                yield new TypeCall(tc.func(), tc.args().stream().map(this::liftType).toList());
            }
            case IncompleteType i -> throw new IllegalStateException("gradient: an unsolved type after inference");
        };
    }

    /** An ADT lifts by lifting its type arguments, which is right only when no constructor names a tensor type itself. */
    private void checkLiftable(GlobalTypeVar g) {
        if (liftableData.containsKey(g)) return;
        liftableData.put(g, true);
        TypeData td = typed.module().types().get(g);
        if (td == null) return;
        for (Constructor c : td.constructors()) {
            for (Type in : c.inputs()) {
                if (containsTensor(in)) {
                    throw new GradientException("gradient: constructor " + c.name() + " of type " + td.name() + " has a field of type " + in
                            + "; differentiable ADTs must carry tensors through type parameters (e.g. List[A])");
                }
            }
        }
    }

    /** Whether {@code t} names a tensor type itself, here or in the fields of an ADT it names (not through type arguments). */
    private boolean containsTensor(Type t) {
        return switch (t) {
            case TensorType tt -> true;
            case TupleType tu -> tu.fields().stream().anyMatch(this::containsTensor);
            case FuncType f -> f.argTypes().stream().anyMatch(this::containsTensor) || containsTensor(f.retType());
            case RefType r -> containsTensor(r.value());
            case TypeCall tc -> tc.args().stream().anyMatch(this::containsTensor) || (tc.func() instanceof GlobalTypeVar g && dataHasTensor(g));
            case GlobalTypeVar g -> dataHasTensor(g);
            case TypeVar v -> false;
            case IncompleteType i -> false;
        };
    }

    private boolean dataHasTensor(GlobalTypeVar g) {
        checkLiftable(g); // throws, naming the constructor, when the ADT has a tensor field of its own
        return false;
    }

    private static boolean hasFloat(Type t) {
        return switch (t) {
            case TensorType tt -> tt.dtype().isFloat();
            case TupleType tu -> tu.fields().stream().anyMatch(ReverseMode::hasFloat);
            default -> false;
        };
    }
}
