package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Test-data factory: seeded random well-formed modules for property tests, and the two 100,000-node
 * shapes that break recursive code (a dataflow chain and a let chain).
 *
 * <p>"Well-formed" means every variable use is in scope of its binder, every binder is bound once,
 * every type variable is bound by an enclosing function, function type or ADT, and every global and
 * constructor referenced exists in the module ({@link WellFormed} checks exactly this). The programs
 * are plausible but not necessarily well-typed. The same seed always gives the same module (up to
 * fresh variable ids, which alpha-equivalence ignores).
 */
public final class RandomModules {
    private RandomModules() {}

    /**
     * Knobs for the random generator.
     *
     * @param maxGlobals   at most this many global functions (at least {@code @main})
     * @param maxDepth     expression nesting limit
     * @param maxAdts      at most this many ADT definitions
     * @param nodeBudget   soft limit of expression nodes per global function
     * @param shadowTypeVars whether a nested function may name a type parameter like an enclosing
     *                     one ({@code def @f[A] { fn [A]() {...} }})
     */
    public record Options(int maxGlobals, int maxDepth, int maxAdts, int nodeBudget, boolean shadowTypeVars) {
        public static final Options DEFAULT = new Options(4, 6, 3, 80, true);

        public Options withShadowTypeVars(boolean on) {
            return new Options(maxGlobals, maxDepth, maxAdts, nodeBudget, on);
        }
    }

    /** The module for {@code seed} with default options. */
    public static IRModule module(long seed) {
        return module(seed, Options.DEFAULT);
    }

    public static IRModule module(long seed, Options options) {
        return new ModuleGenerator(new Random(seed), options).generate();
    }

    /** {@code count} modules for seeds {@code firstSeed, firstSeed + 1, ...}. */
    public static List<IRModule> modules(long firstSeed, int count) {
        List<IRModule> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) out.add(module(firstSeed + i));
        return out;
    }

    /**
     * {@code def @main(%x: Tensor[(10), float32]) { add(add(...add(%x, 1f)..., 2f), 3f) }} with
     * {@code calls} nested operator calls and no lets: a dataflow chain {@code calls} deep, about
     * {@code 3 * calls} nodes (call, op, constant per level).
     */
    public static IRModule dataflowChain(int calls) {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 10));
        Expr e = x;
        for (int i = 0; i < calls; i++) {
            e = Call.op(i % 3 == 2 ? "multiply" : "add", e, new Constant(NDArray.scalar((float) (i % 7 + 1))));
        }
        return IRModule.fromMain(new Function(List.of(x), e));
    }

    /**
     * {@code def @main(%x0: float32) { let %x1 = add(%x0, 1f); ... let %xN = add(%x{N-1}, 1f); %xN }}:
     * a let chain {@code lets} deep.
     */
    public static IRModule letChain(int lets) {
        Var first = Var.fresh("x0", TensorType.scalar(DType.FLOAT32));
        Var[] vars = new Var[lets + 1];
        vars[0] = first;
        for (int i = 1; i <= lets; i++) vars[i] = Var.fresh("x" + i);
        // Built inside out: the innermost body is the last variable.
        Expr body = vars[lets];
        for (int i = lets; i >= 1; i--) {
            Expr value = Call.op("add", vars[i - 1], new Constant(NDArray.scalar((float) (i % 5))));
            body = new Let(vars[i], value, body);
        }
        return IRModule.fromMain(new Function(List.of(first), body));
    }
}
