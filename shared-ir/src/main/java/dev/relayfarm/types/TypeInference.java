package dev.relayfarm.types;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Type;
import java.util.Map;

/**
 * Relay type inference: Hindley-Milner style unification with type relations for operators
 * (Roesch et al., "Relay: A High-Level Compiler for Deep Learning", section 3.3). Checks a whole
 * module, or re-checks one function against the known types of the others.
 *
 * <p>Typical use:
 * <pre>{@code
 * InferResult r = TypeInference.infer(module);        // throws TypeException when ill-typed
 * r.typeOf(someExpr);                                // Tensor[(5, 10, 4), float32]
 * r.typeOf(new GlobalVar("main"));                   // fn (...) -> ...
 * r.module();                                        // globals with full signatures
 * }</pre>
 *
 * <p>Not done here: implicit generalization (a global is polymorphic only through declared type
 * parameters), and shape-variable unification ({@code n} never binds to {@code 3}).
 */
public final class TypeInference {
    private TypeInference() {}

    /** Checks every global of {@code module} with the operators of the registry. */
    public static InferResult infer(IRModule module) {
        return infer(module, OpResolver.REGISTRY);
    }

    /** Checks every global of {@code module}, looking operators up in {@code ops}. */
    public static InferResult infer(IRModule module, OpResolver ops) {
        return Inferencer.inferModule(module, ops);
    }

    /**
     * Checks one expression: a {@link Function} is checked as {@code @main}, anything else as the
     * body of a parameterless {@code @main}. Convenient for tests and for passes that build small
     * programs.
     */
    public static InferResult inferExpr(Expr expr, OpResolver ops) {
        Function main = expr instanceof Function f ? f : new Function(java.util.List.of(), expr);
        return infer(IRModule.fromMain(main), ops);
    }

    /** The type of {@code expr} checked alone (see {@link #inferExpr}), e.g. for a relation test. */
    public static Type typeOf(Expr expr, OpResolver ops) {
        InferResult r = inferExpr(expr, ops);
        Function main = r.module().main().orElseThrow();
        return expr instanceof Function ? r.typeOf(main) : r.typeOf(main.body());
    }

    /**
     * Re-checks only {@code gv} after it changed; the other globals' types come from
     * {@code previous} (whose table entries for the other, unchanged functions are carried over).
     */
    public static InferResult inferFunction(IRModule module, GlobalVar gv, InferResult previous) {
        return inferFunction(module, gv, previous, OpResolver.REGISTRY);
    }

    public static InferResult inferFunction(IRModule module, GlobalVar gv, InferResult previous, OpResolver ops) {
        return Inferencer.inferFunction(module, gv, previous.globalTypes(), previous, ops);
    }

    /**
     * Re-checks only {@code gv}, with the other globals' types given (a global missing from
     * {@code known} must be fully annotated). The result's table covers {@code gv}'s nodes only.
     */
    public static InferResult inferFunction(IRModule module, GlobalVar gv, Map<GlobalVar, FuncType> known, OpResolver ops) {
        return Inferencer.inferFunction(module, gv, known, null, ops);
    }
}
