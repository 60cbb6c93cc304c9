package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Removes global functions that {@code @main} cannot reach through calls or references.
 *
 * <pre>
 * def @unused(%x) { %x }  def @f(%x) { %x }  def @main(%y) { @f(%y) }
 *   ==>  def @f(%x) { %x }  def @main(%y) { @f(%y) }
 * </pre>
 *
 * Not done: a module without {@code @main} is left as it is (nothing says what its entry is); ADT
 * definitions are kept even when unused.
 */
public final class RemoveUnusedFunctions implements Pass {
    private static final PassInfo INFO = new PassInfo("remove-unused-functions", 1,
            "drops global functions @main does not reach");

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        GlobalVar main = new GlobalVar("main");
        if (!module.functions().containsKey(main)) return PassResult.unchanged(module);
        Set<GlobalVar> reached = new LinkedHashSet<>();
        ArrayDeque<GlobalVar> work = new ArrayDeque<>();
        reached.add(main);
        work.add(main);
        while (!work.isEmpty()) {
            for (Expr e : ExprTraversal.postOrder(module.lookup(work.poll()))) {
                if (e instanceof GlobalVar g && module.functions().containsKey(g) && reached.add(g)) work.add(g);
            }
        }
        IRModule out = module;
        for (GlobalVar g : module.functions().keySet()) {
            if (!reached.contains(g)) out = out.withoutFunction(g);
        }
        return PassResult.of(module, out);
    }
}
