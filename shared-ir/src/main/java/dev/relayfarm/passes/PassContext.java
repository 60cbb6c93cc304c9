package dev.relayfarm.passes;

import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The state a pipeline threads through its passes: the options, the type information of the module
 * being transformed (re-inferred only after a change, and only for the globals whose function
 * object changed when their signatures stay the same), the instrumentation records, and where IR
 * dumps go.
 */
public final class PassContext {
    private final PassOptions options;
    private final Consumer<String> dumps;
    private final List<PassRecord> records = new ArrayList<>();
    private InferResult types;

    public PassContext(PassOptions options, Consumer<String> dumps) {
        this.options = options;
        this.dumps = dumps;
    }

    public PassContext(PassOptions options) {
        this(options, s -> {});
    }

    public PassOptions options() {
        return options;
    }

    /** Types of the module the running pass received (see {@link Pass}). */
    public InferResult types() {
        if (types == null) throw new IllegalStateException("no module has been typed in this context yet");
        return types;
    }

    /**
     * Types {@code module} and makes it the current one. Returns the cached result when it is the
     * module already typed; re-checks only the changed globals when the global names, the ADTs and
     * every changed global's signature stay the same; otherwise checks the whole module. The
     * result's {@code module()} has full global signatures and is what the next pass must receive.
     */
    public InferResult typesOf(IRModule module) {
        if (types != null && types.module() == module) return types;
        types = types == null ? TypeInference.infer(module) : reinfer(types, module);
        return types;
    }

    private static InferResult reinfer(InferResult previous, IRModule module) {
        IRModule before = previous.module();
        if (!before.functions().keySet().equals(module.functions().keySet()) || !before.types().equals(module.types())) {
            return TypeInference.infer(module);
        }
        InferResult r = previous;
        IRModule current = module;
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            if (before.functions().get(e.getKey()) == e.getValue()) continue;
            FuncType old = previous.typeOf(e.getKey());
            r = TypeInference.inferFunction(current, e.getKey(), r);
            current = r.module();
            if (!dev.relayfarm.ir.StructuralEquality.equal(old, r.typeOf(e.getKey()))) return TypeInference.infer(module);
        }
        return r;
    }

    /** Instrumentation of every pass run so far, in order. */
    public List<PassRecord> records() {
        return Collections.unmodifiableList(records);
    }

    void record(PassRecord r) {
        records.add(r);
    }

    void dump(String text) {
        dumps.accept(text);
    }
}
