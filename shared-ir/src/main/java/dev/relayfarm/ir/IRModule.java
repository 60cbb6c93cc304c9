package dev.relayfarm.ir;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A whole program: global functions ({@code def @name}) and ADT definitions ({@code type Name}),
 * each in definition order. Immutable: every update returns a new module sharing the unchanged
 * parts.
 */
public final class IRModule {
    public static final IRModule EMPTY = new IRModule(Map.of(), Map.of());

    private final Map<GlobalVar, Function> functions;
    private final Map<GlobalTypeVar, TypeData> types;

    private IRModule(Map<GlobalVar, Function> functions, Map<GlobalTypeVar, TypeData> types) {
        this.functions = Collections.unmodifiableMap(new LinkedHashMap<>(functions));
        this.types = Collections.unmodifiableMap(new LinkedHashMap<>(types));
    }

    public static IRModule of(Map<GlobalVar, Function> functions, Map<GlobalTypeVar, TypeData> types) {
        return new IRModule(functions, types);
    }

    /** A module whose {@code @main} is {@code main}. */
    public static IRModule fromMain(Function main) {
        return EMPTY.withFunction(new GlobalVar("main"), main);
    }

    /** Global functions in definition order. */
    public Map<GlobalVar, Function> functions() {
        return functions;
    }

    /** ADT definitions in definition order. */
    public Map<GlobalTypeVar, TypeData> types() {
        return types;
    }

    public Optional<Function> function(String name) {
        return Optional.ofNullable(functions.get(new GlobalVar(name)));
    }

    /** The function bound to {@code gv}; throws naming it when absent. */
    public Function lookup(GlobalVar gv) {
        Function f = functions.get(gv);
        if (f == null) throw new IllegalArgumentException("no global function @" + gv.name() + " in the module");
        return f;
    }

    public Optional<Function> main() {
        return function("main");
    }

    public Optional<TypeData> typeData(String name) {
        return Optional.ofNullable(types.get(new GlobalTypeVar(name)));
    }

    /** Finds a constructor by name across all ADTs. */
    public Optional<Constructor> constructor(String name) {
        for (TypeData td : types.values()) {
            for (Constructor c : td.constructors()) {
                if (c.name().equals(name)) return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /** Adds or replaces a global function (replacing keeps its position). */
    public IRModule withFunction(GlobalVar gv, Function f) {
        LinkedHashMap<GlobalVar, Function> m = new LinkedHashMap<>(functions);
        m.put(gv, f);
        return new IRModule(m, types);
    }

    public IRModule withFunction(String name, Function f) {
        return withFunction(new GlobalVar(name), f);
    }

    public IRModule withoutFunction(GlobalVar gv) {
        LinkedHashMap<GlobalVar, Function> m = new LinkedHashMap<>(functions);
        m.remove(gv);
        return new IRModule(m, types);
    }

    /** Adds or replaces an ADT definition. */
    public IRModule withType(TypeData td) {
        LinkedHashMap<GlobalTypeVar, TypeData> m = new LinkedHashMap<>(types);
        m.put(td.header(), td);
        return new IRModule(functions, m);
    }

    @Override
    public String toString() {
        return "IRModule(functions=" + functions.keySet() + ", types=" + types.keySet() + ")";
    }
}
