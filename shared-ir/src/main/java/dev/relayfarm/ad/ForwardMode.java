package dev.relayfarm.ad;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
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
import dev.relayfarm.types.InferResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * First-order forward-mode AD with dual numbers: every value of the program is paired with its tangent (a value
 * of the same type: a tensor for a tensor, a tuple of tangents for a tuple), and every operator call with its
 * {@link OpTangent} rule. One pass over the program gives {@code df(x)[dx]}, the directional derivative along one
 * direction, where reverse mode ({@link ReverseMode}) gives the whole gradient; the two agree through
 * {@code <grad f(x), dx> = df(x)[dx]}, which is what the tests check.
 *
 * <p>The result is a module whose {@code @main} takes the original parameters followed by one tangent per
 * parameter (same types, named {@code %d_<name>}) and returns {@code (f(x...), df(x...)[dx...])}. Each other global
 * the program reaches becomes {@code @g_jvp} with that signature, so calls between globals (recursion included) carry
 * their tangents; a program of one global gives a JVP of plain dataflow, which compiles like any model.
 *
 * <p>Supported: {@code let}, tuples and projections, constants (zero tangent), operator calls, {@code if} (the
 * tangent of the branch taken), calls of globals. Anything else (function literals, closures, {@code match} and
 * ADTs, references) raises a {@link GradientException} naming the node; so does an operator without a tangent
 * rule. The program is brought to A-normal form first, so the walk is a loop along each scope's bindings.
 * Tangents that are zero are not tracked specially: constants get {@code zeros_like}, and the arithmetic on them
 * is left to later simplification.
 */
public final class ForwardMode {
    private final InferResult typed;
    private final RuleTable<OpTangent> tangents;
    private final Map<Var, Dual> env = new IdentityHashMap<>();
    private final Map<GlobalVar, GlobalVar> jvps = new LinkedHashMap<>();
    private final Map<GlobalVar, Function> jvpFunctions = new LinkedHashMap<>();
    private final Deque<GlobalVar> pending = new ArrayDeque<>();

    /** A value and its tangent, both bound to variables (so rules may use them any number of times). */
    private record Dual(Var primal, Var tangent) {}

    private ForwardMode(InferResult typed, RuleTable<OpTangent> tangents) {
        this.typed = typed;
        this.tangents = tangents;
    }

    /** The Jacobian-vector product of {@code global}, as the {@code @main} of a new module (see the class doc). */
    public static IRModule jvp(IRModule module, String global) {
        InferResult typed = AdPrograms.typedAnf(module);
        GlobalVar gv = AdPrograms.global(typed, global, "forward mode");
        ForwardMode fm = new ForwardMode(typed, OpTangents.get());
        // The differentiated global's JVP is @main itself (a recursive call reaches it there); the others are @g_jvp.
        fm.jvps.put(gv, new GlobalVar("main"));
        fm.pending.push(gv);
        while (!fm.pending.isEmpty()) fm.jvpGlobal(fm.pending.pop());
        return AdPrograms.typed(IRModule.of(fm.jvpFunctions, typed.module().types()), "the JVP of @" + global);
    }

    // ---------------------------------------------------------------- globals

    private GlobalVar jvpOf(GlobalVar gv) {
        return jvps.computeIfAbsent(gv, g -> {
            pending.push(g);
            return new GlobalVar(g.name() + "_jvp");
        });
    }

    private void jvpGlobal(GlobalVar gv) {
        Function f = typed.module().lookup(gv);
        if (!f.typeParams().isEmpty()) throw new GradientException("forward mode: @" + gv.name() + " is polymorphic; only monomorphic globals are supported");
        List<Var> params = new ArrayList<>();
        List<Var> dparams = new ArrayList<>();
        for (Var p : f.params()) {
            Type t = paramType(gv, p);
            Dual d = new Dual(Var.fresh(p.name(), t, p.span()), Var.fresh("d_" + p.name(), t, p.span()));
            env.put(p, d);
            params.add(d.primal());
            dparams.add(d.tangent());
        }
        params.addAll(dparams);
        Type ret = returnType(gv);
        jvpFunctions.put(jvps.get(gv), new Function(params, scope(f.body()), new TupleType(List.of(ret, ret)), List.of(), Attrs.EMPTY, f.span()));
    }

    private Type paramType(GlobalVar gv, Var p) {
        Type t = typed.typeOf(p);
        if (!AdPrograms.isTensorTree(t)) {
            throw new GradientException("forward mode: parameter %" + p.name() + " of @" + gv.name() + " has type " + t
                    + "; parameters must be tensors or tuples of tensors" + AdPrograms.at(p.span()));
        }
        return t;
    }

    private Type returnType(GlobalVar gv) {
        Type ret = ((FuncType) typed.typeOf(gv)).retType();
        if (!AdPrograms.isTensorTree(ret)) throw new GradientException("forward mode: @" + gv.name() + " returns " + ret + "; it must return a tensor or a tuple of tensors");
        return ret;
    }

    // ---------------------------------------------------------------- expressions

    /** A scope (function body, branch) as an expression of its {@code (value, tangent)} pair. */
    private Expr scope(Expr e) {
        Bindings b = new Bindings();
        Dual d = bindings(e, b);
        return b.wrap(new Tuple(List.of(d.primal(), d.tangent())));
    }

    /** The bindings of a chain of lets, added to {@code b} in a loop, and the dual of its result. */
    private Dual bindings(Expr e, Bindings b) {
        Expr cur = e;
        while (cur instanceof Let l) {
            env.put(l.var(), value(l.value(), b));
            cur = l.body();
        }
        return value(cur, b);
    }

    private Dual value(Expr e, Bindings b) {
        return switch (e) {
            case Var v -> {
                Dual d = env.get(v);
                if (d == null) throw new IllegalStateException("forward mode: unbound variable %" + v.name() + AdPrograms.at(v.span()));
                yield d;
            }
            case Constant c -> dual(b, "c", c, Grads.call("zeros_like", c));
            case Tuple t -> {
                List<Expr> ps = new ArrayList<>(), ts = new ArrayList<>();
                for (Expr f : t.fields()) {
                    Dual d = value(f, b);
                    ps.add(d.primal());
                    ts.add(d.tangent());
                }
                yield dual(b, "t", new Tuple(ps), new Tuple(ts));
            }
            case TupleGetItem t -> {
                Dual d = value(t.tuple(), b);
                yield dual(b, "p", new TupleGetItem(d.primal(), t.index()), new TupleGetItem(d.tangent(), t.index()));
            }
            case Let l -> bindings(l, b);
            case If i -> {
                Var cond = value(i.cond(), b).primal();
                yield pair(b, "if", new If(cond, scope(i.thenBranch()), scope(i.elseBranch()), i.span()));
            }
            case Call c -> switch (c.callee()) {
                case Op op -> operatorCall(c, op, b);
                case GlobalVar g -> {
                    List<Expr> ps = new ArrayList<>(), ts = new ArrayList<>();
                    for (Expr a : c.args()) {
                        Dual d = value(a, b);
                        ps.add(d.primal());
                        ts.add(d.tangent());
                    }
                    ps.addAll(ts);
                    yield pair(b, "r", new Call(jvpOf(g), ps, Attrs.EMPTY, List.of(), c.span()));
                }
                case Constructor k -> throw unsupported("constructor " + k.name() + " (ADTs)", c.span());
                default -> throw unsupported("a call of a function value (closures are higher-order)", c.span());
            };
            case GlobalVar g -> throw unsupported("global @" + g.name() + " used as a value (higher-order)", g.span());
            case Op o -> throw unsupported("operator " + o.name() + " used as a value (higher-order)", o.span());
            case Function f -> throw unsupported("a function literal (higher-order)", f.span());
            case Constructor k -> throw unsupported("constructor " + k.name() + " (ADTs)", k.span());
            case Match m -> throw unsupported("match (ADTs)", m.span());
            case RefCreate r -> throw unsupported("ref (references)", r.span());
            case RefRead r -> throw unsupported("a reference read (!)", r.span());
            case RefWrite r -> throw unsupported("a reference write (:=)", r.span());
        };
    }

    /** {@code op(args)}: the primal call, then the rule's tangent over the bound primals and tangents. */
    private Dual operatorCall(Call c, Op op, Bindings b) {
        List<Var> primals = new ArrayList<>(), argTangents = new ArrayList<>();
        List<Type> argTypes = new ArrayList<>();
        for (Expr a : c.args()) {
            Dual d = value(a, b);
            primals.add(d.primal());
            argTangents.add(d.tangent());
            argTypes.add(typed.typeOf(a));
        }
        Type outType = typed.typeOf(c);
        Var y = b.let("y", new Call(op, new ArrayList<>(primals), c.attrs(), c.typeArgs(), c.span()));
        if (tangents.isConstant(op.name())) return new Dual(y, b.let("dy", Grads.call("zeros_like", y)));
        OpTangent rule = tangents.rule(op.name()).orElseThrow(() -> new GradientException(
                "forward mode: no tangent registered for operator " + op.name() + AdPrograms.at(c.span())));
        return new Dual(y, b.let("dy", rule.jvp(new GradientCall(c, primals, argTypes, y, outType), argTangents)));
    }

    private static GradientException unsupported(String what, Span span) {
        return new GradientException("forward mode: " + what + " is not supported; only first-order programs (let, tuples, projections, "
                + "operator calls, if, calls of globals) are" + AdPrograms.at(span));
    }

    private static Dual dual(Bindings b, String name, Expr primal, Expr tangent) {
        return new Dual(b.let(name, primal), b.let("d_" + name, tangent));
    }

    /** An expression of a {@code (value, tangent)} pair, split into its fields. */
    private static Dual pair(Bindings b, String name, Expr pair) {
        Var r = b.let(name, pair);
        return dual(b, name, new TupleGetItem(r, 0), new TupleGetItem(r, 1));
    }
}
