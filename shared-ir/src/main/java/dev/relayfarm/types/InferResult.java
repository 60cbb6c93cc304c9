package dev.relayfarm.types;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Type;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What type inference returns; nodes are never mutated. {@link #module()} is the input module with
 * every global function's missing parameter annotations and return type filled in (so it prints
 * with full signatures; a function whose parameters were all annotated keeps its body nodes). The
 * type table is keyed by node identity and covers every expression node of that module, binders
 * included; types are fully resolved (no holes), with simplified shape dimensions.
 *
 * <p>References that are typically shared objects get their generic type: a {@code GlobalVar} maps
 * to its global's (possibly polymorphic) function type, a {@code Constructor} to
 * {@code fn [A](A, List[A]) -> List[A]}; the type arguments inferred at a call of a polymorphic
 * callee are in {@link #typeArgs(Call)}. An {@code Op} maps to its call's instantiated type.
 */
public final class InferResult {
    private final IRModule module;
    private final Map<Expr, Type> types;
    private final Map<GlobalVar, FuncType> globalTypes;
    private final List<Diagnostic> warnings;
    private final Map<Call, List<Type>> typeArgs;

    InferResult(IRModule module, IdentityHashMap<Expr, Type> types, Map<GlobalVar, FuncType> globalTypes,
            List<Diagnostic> warnings, IdentityHashMap<Call, List<Type>> typeArgs) {
        this.module = module;
        this.types = Collections.unmodifiableMap(types);
        this.globalTypes = Collections.unmodifiableMap(new LinkedHashMap<>(globalTypes));
        this.warnings = List.copyOf(warnings);
        this.typeArgs = Collections.unmodifiableMap(typeArgs);
    }

    /** The module with full global signatures. */
    public IRModule module() {
        return module;
    }

    /** The checked type of {@code e} (a node of {@link #module()}); throws naming it when absent. */
    public Type typeOf(Expr e) {
        Type t = types.get(e);
        if (t == null) throw new IllegalArgumentException("no type recorded for " + e + " (not a node of the checked module)");
        return t;
    }

    /** The function type of a global, e.g. {@code fn [A](A) -> A}. */
    public FuncType typeOf(GlobalVar gv) {
        FuncType t = globalTypes.get(gv);
        if (t == null) throw new IllegalArgumentException("no global @" + gv.name() + " in the checked module");
        return t;
    }

    /** The identity-keyed type table (read-only). */
    public Map<Expr, Type> types() {
        return types;
    }

    /** Every global's function type, in module order. */
    public Map<GlobalVar, FuncType> globalTypes() {
        return globalTypes;
    }

    /** Warnings, e.g. non-exhaustive {@code match}. */
    public List<Diagnostic> warnings() {
        return warnings;
    }

    /** The type arguments inferred for a call of a polymorphic function or constructor; empty otherwise. */
    public List<Type> typeArgs(Call call) {
        return typeArgs.getOrDefault(call, List.of());
    }

    Map<Call, List<Type>> typeArgsTable() {
        return typeArgs;
    }
}
