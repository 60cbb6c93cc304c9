package dev.relayfarm.passes;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every pass by its kebab-case name, built in code (no classpath scanning); a duplicate name fails
 * at start-up. Adding a pass is one line in {@link #build}.
 */
public final class PassRegistry {
    private static final Map<String, Pass> PASSES = build();

    private PassRegistry() {}

    private static Map<String, Pass> build() {
        Map<String, Pass> m = new LinkedHashMap<>();
        add(m, new RemoveUnusedFunctions());
        add(m, new FoldScaleAxis());
        add(m, new ConvertLayout());
        add(m, new AlterOpLayout());
        add(m, new WinogradConv2d());
        add(m, new FoldConstant());
        add(m, new FoldEmptyTensors());
        add(m, new EliminateCommonSubexpr());
        add(m, new SimplifyExpr());
        add(m, new SimplifyInference());
        add(m, new PadChannelGroups());
        add(m, new CanonicalizeOps());
        add(m, new DynamicToStatic());
        add(m, new FuseOps());
        add(m, new CombineParallelConv2D());
        add(m, new PartialEvaluate());
        add(m, new UnrollLoops());
        add(m, new IfConversion());
        add(m, new ToANormalForm());
        add(m, new ToGraphNormalForm());
        add(m, new ToBasicBlockNormalForm());
        add(m, new DeadCodeElimination());
        add(m, new Inline());
        add(m, new EtaExpand());
        add(m, new LambdaLift());
        return Collections.unmodifiableMap(m);
    }

    private static void add(Map<String, Pass> m, Pass pass) {
        if (m.putIfAbsent(pass.name(), pass) != null) throw new IllegalStateException("two passes named " + pass.name());
    }

    /** The pass called {@code name}; the error lists the known names. */
    public static Pass get(String name) {
        Pass p = PASSES.get(name);
        if (p == null) throw new PassException("unknown pass '" + name + "'; known passes: " + String.join(", ", PASSES.keySet()));
        return p;
    }

    public static Collection<Pass> all() {
        return PASSES.values();
    }

    /**
     * A frozen pipeline of the named passes in order, with each pass's required passes inserted
     * just before it unless they already run earlier (resolved once, here).
     */
    public static Sequential sequential(String name, List<String> passNames) {
        List<Pass> out = new ArrayList<>();
        for (String n : passNames) addWithRequirements(get(n), out, new ArrayList<>());
        return new Sequential(name, out);
    }

    private static void addWithRequirements(Pass pass, List<Pass> out, List<String> visiting) {
        if (visiting.contains(pass.name())) throw new PassException("passes require each other in a cycle: " + visiting + " -> " + pass.name());
        visiting.add(pass.name());
        for (String req : pass.info().requires()) {
            if (out.stream().noneMatch(p -> p.name().equals(req))) addWithRequirements(get(req), out, visiting);
        }
        visiting.remove(visiting.size() - 1);
        out.add(pass);
    }
}
