package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Inlines calls of global functions marked {@code Inline=1}: {@code @f(a, b)} becomes f's body with
 * fresh binders, its parameters bound to the arguments ({@code let %p = a;} in argument order, so
 * each argument is still evaluated once and in order; a variable, constant or global argument is
 * substituted directly). Marked functions called from marked functions are inlined into them first,
 * so a chain of marked functions disappears in one run. Afterwards, a marked global that nothing
 * references any more is dropped ({@code @main} never).
 *
 * <pre>
 * def @sq(%y, Inline=1) { multiply(%y, %y) }   def @main(%x) { @sq(exp(%x)) }
 *   ==>  def @main(%x) { let %y = exp(%x); multiply(%y, %y) }
 * </pre>
 *
 * Errors (the attribute asks for something impossible; the message names the function): a marked
 * function that can reach itself through references (recursion: inlining would not end), and a
 * marked polymorphic function (its body's type variables would be unbound at the call site). Not
 * done: a marked global used as a value rather than called stays as it is; primitive functions are
 * never entered.
 */
public final class Inline implements Pass {
    public static final String ATTR = "Inline";
    private static final PassInfo INFO = new PassInfo("inline", 1,
            "inlines calls of globals marked Inline=1, then drops the marked globals left unused");

    @Override
    public PassInfo info() {
        return INFO;
    }

    static boolean marked(Function f) {
        return f.attrs().get(ATTR).map(v -> v instanceof AttrValue.IntValue(long i) && i != 0).orElse(false);
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        Set<GlobalVar> marked = new LinkedHashSet<>();
        module.functions().forEach((g, f) -> {
            if (marked(f) && !f.isPrimitive()) marked.add(g);
        });
        if (marked.isEmpty()) return PassResult.unchanged(module);
        for (GlobalVar g : marked) {
            checkNotRecursive(g, module);
            if (!module.lookup(g).typeParams().isEmpty()) {
                throw new PassException("inline: @" + g.name() + " is marked Inline=1 but is polymorphic "
                        + module.lookup(g).typeParams() + "; only monomorphic functions are inlined");
            }
        }
        Inliner inliner = new Inliner(module, marked);
        IRModule out = FunctionPass.mapFunctions(module, (g, f) -> inliner.inlined(g));
        for (GlobalVar g : marked) {
            if (!g.name().equals("main") && !referenced(g, out)) out = out.withoutFunction(g);
        }
        return PassResult.of(module, out);
    }

    private static Set<GlobalVar> references(Function f) {
        Set<GlobalVar> out = new LinkedHashSet<>();
        for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof GlobalVar g) out.add(g);
        return out;
    }

    private static void checkNotRecursive(GlobalVar start, IRModule module) {
        Map<GlobalVar, GlobalVar> parent = new HashMap<>();
        ArrayDeque<GlobalVar> work = new ArrayDeque<>();
        work.add(start);
        while (!work.isEmpty()) {
            GlobalVar g = work.poll();
            Function f = module.functions().get(g);
            if (f == null) continue;
            for (GlobalVar r : references(f)) {
                if (r.equals(start)) {
                    List<String> cycle = new ArrayList<>();
                    for (GlobalVar p = g; p != null && !p.equals(start); p = parent.get(p)) cycle.add(0, "@" + p.name());
                    cycle.add(0, "@" + start.name());
                    cycle.add("@" + start.name());
                    throw new PassException("inline: @" + start.name() + " is marked Inline=1 but is recursive ("
                            + String.join(" -> ", cycle) + "); a recursive function cannot be inlined");
                }
                if (!parent.containsKey(r)) {
                    parent.put(r, g);
                    work.add(r);
                }
            }
        }
    }

    private static boolean referenced(GlobalVar g, IRModule module) {
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            if (!e.getKey().equals(g) && references(e.getValue()).contains(g)) return true;
        }
        return false;
    }

    /** Each global with its marked callees inlined, memoized; marked globals form no cycle (checked). */
    private static final class Inliner {
        private final IRModule module;
        private final Set<GlobalVar> marked;
        private final Map<GlobalVar, Function> done = new HashMap<>();

        Inliner(IRModule module, Set<GlobalVar> marked) {
            this.module = module;
            this.marked = marked;
        }

        Function inlined(GlobalVar g) {
            Function known = done.get(g);
            if (known != null) return known;
            Function f = module.lookup(g);
            // Callees first (recursion depth = length of a chain of marked globals, not of an expression).
            for (GlobalVar r : references(f)) if (marked.contains(r) && !r.equals(g)) inlined(r);
            Function out = f.withBody(new ExprRewriter() {
                @Override
                protected Expr rewrite(Expr pre, Expr post) {
                    return post instanceof Call c && c.callee() instanceof GlobalVar callee && marked.contains(callee)
                            ? expand(done.get(callee), c.args()) : post;
                }
            }.rewrite(f.body()));
            done.put(g, out);
            return out;
        }

        private static Expr expand(Function f, List<Expr> args) {
            Map<Var, Expr> subst = new IdentityHashMap<>();
            List<Var> lets = new ArrayList<>();
            List<Expr> values = new ArrayList<>();
            for (int i = 0; i < args.size(); i++) {
                Var p = f.params().get(i);
                Expr a = args.get(i);
                if (ScopeFill.atomic(a)) {
                    subst.put(p, a);
                } else {
                    Var v = Subst.fresh(p);
                    subst.put(p, v);
                    lets.add(v);
                    values.add(a);
                }
            }
            Expr body = Subst.copy(f.body(), subst);
            for (int i = lets.size() - 1; i >= 0; i--) body = new Let(lets.get(i), values.get(i), body);
            return body;
        }
    }
}
