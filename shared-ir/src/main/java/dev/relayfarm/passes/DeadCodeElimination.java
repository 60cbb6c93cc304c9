package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Dead-code elimination in TVM's three stages: purity analysis ({@link Purity}) -> usage analysis
 * (which bindings are live, how often each variable is used) -> eliminator (one rewrite). Rules:
 * <ol>
 *   <li>A let binding whose variable is not used by live code and whose value is pure is dropped.
 *   <li>A let binding whose value may have an effect (reference create/read/write, a call of an
 *       unknown or impure function) is kept, used or not: effects are never dropped, duplicated or
 *       reordered.
 *   <li>Uses are counted in live code only: a let's body is scanned before its value, and the value
 *       only when the binding is kept, so a chain of bindings that only feed each other goes in one
 *       run, and a recursive function's references to itself do not keep it alive.
 *   <li>With {@link Options#inlineOnce}: a kept binding with a pure value whose variable is used
 *       exactly once, and not inside a function nested below the let (that would recompute it per
 *       call), is substituted at its use and dropped.
 * </ol>
 *
 * <pre>
 * fn (%x) { let %a = exp(%x); let %b = ref(%x); let %c = add(%x, 1f); %c }
 *   ==>  fn (%x) { let %b = ref(%x); let %c = add(%x, 1f); %c }
 * </pre>
 *
 * Not done: unused dataflow has no binding to drop and is not there to begin with (a graph node
 * exists only when something uses it); unused globals are {@code remove-unused-functions}' job;
 * primitive globals are left as they are.
 */
public final class DeadCodeElimination implements Pass {
    /** {@code inlineOnce}: also substitute pure bindings used exactly once (rule 4); TVM's {@code inline_once}. */
    public record Options(boolean inlineOnce) {
        public static final Options DEFAULT = new Options(false);
    }

    private static final PassInfo INFO = new PassInfo("dead-code-elimination", 1,
            "drops unused let bindings of pure values (effects kept); optionally inlines single uses");

    private final Options options;

    public DeadCodeElimination() {
        this(Options.DEFAULT);
    }

    public DeadCodeElimination(Options options) {
        this.options = options;
    }

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        Purity purity = Purity.of(module);
        return PassResult.of(module, FunctionPass.mapFunctions(module,
                (g, f) -> f.withBody(eliminate(f.body(), Usage.of(f.body(), purity), purity))));
    }

    /** Stage 2: live lets, use counts, and at which function depth each let and use sits. */
    private record Usage(Set<Let> live, Map<Var, Integer> uses, Map<Var, Integer> useDepth, Map<Let, Integer> letDepth) {
        private sealed interface Task {}

        private record Visit(Expr e, int depth) implements Task {}

        private record Decide(Let let, int depth) implements Task {}

        static Usage of(Expr body, Purity purity) {
            Usage u = new Usage(Collections.newSetFromMap(new IdentityHashMap<>()), new IdentityHashMap<>(),
                    new IdentityHashMap<>(), new IdentityHashMap<>());
            Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            ArrayDeque<Task> work = new ArrayDeque<>();
            work.push(new Visit(body, 0));
            while (!work.isEmpty()) {
                switch (work.pop()) {
                    case Visit(Expr e, int depth) -> {
                        if (e instanceof Var v) {
                            u.uses.merge(v, 1, Integer::sum);
                            u.useDepth.merge(v, depth, Math::max);
                            continue;
                        }
                        if (!seen.add(e)) continue;
                        switch (e) {
                            case Let l -> {
                                // Rule 3: the body first; the Decide task runs after all of it.
                                u.letDepth.put(l, depth);
                                work.push(new Decide(l, depth));
                                work.push(new Visit(l.body(), depth));
                            }
                            case Function f -> work.push(new Visit(f.body(), depth + 1));
                            default -> {
                                var kids = e.children();
                                for (int i = kids.size() - 1; i >= 0; i--) work.push(new Visit(kids.get(i), depth));
                            }
                        }
                    }
                    case Decide(Let l, int depth) -> {
                        // Rules 1 and 2: kept when used or when the value may have an effect.
                        if (u.uses.getOrDefault(l.var(), 0) > 0 || !purity.isPure(l.value())) {
                            u.live.add(l);
                            work.push(new Visit(l.value(), depth));
                        }
                    }
                }
            }
            return u;
        }

        boolean inlinable(Let l, Purity purity) {
            // Rule 4; a use inside the value itself (recursion) counts too, so it is never inlined.
            return live.contains(l) && uses.getOrDefault(l.var(), 0) == 1 && purity.isPure(l.value())
                    && useDepth.get(l.var()) <= letDepth.get(l);
        }
    }

    /** Stage 3. */
    private Expr eliminate(Expr body, Usage usage, Purity purity) {
        Map<Var, Let> inlined = new IdentityHashMap<>();
        boolean dead = false;
        for (Let l : usage.letDepth().keySet()) {
            if (!usage.live().contains(l)) dead = true;
            else if (options.inlineOnce() && usage.inlinable(l, purity)) inlined.put(l.var(), l);
        }
        if (!dead && inlined.isEmpty()) return body;
        Map<Expr, Expr> done = new IdentityHashMap<>();
        return new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                Expr out = post;
                if (pre instanceof Let l && !usage.live().contains(l)) {
                    out = ((Let) post).body(); // rule 1
                } else if (pre instanceof Let l && inlined.containsKey(l.var())) {
                    out = ((Let) post).body(); // rule 4: the value moved to the use
                } else if (pre instanceof Var v && inlined.containsKey(v)) {
                    out = done.get(inlined.get(v).value()); // rewritten already: values precede bodies
                }
                done.put(pre, out);
                return out;
            }
        }.rewrite(body);
    }
}
