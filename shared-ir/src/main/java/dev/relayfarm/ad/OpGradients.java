package dev.relayfarm.ad;

import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gradient of every differentiable operator, registered in code beside the operator families (each family
 * of rules in its own class; a name registered twice, or one the operator registry lacks, fails fast).
 * Operators whose result is piecewise constant in their inputs (comparisons, rounding, argmax, shape_of,
 * constant fills) are registered as {@linkplain #isConstant constant}: they pass no adjoint back, which is
 * their true gradient almost everywhere.
 */
public final class OpGradients {
    private static final OpGradients INSTANCE = build();

    private final Map<String, OpGradient> rules;
    private final Set<String> constant;

    private OpGradients(Map<String, OpGradient> rules, Set<String> constant) {
        this.rules = Collections.unmodifiableMap(rules);
        this.constant = Collections.unmodifiableSet(constant);
    }

    /** Collects one family's registrations. */
    public static final class Registrar {
        private final Map<String, OpGradient> rules = new LinkedHashMap<>();
        private final Set<String> constant = new LinkedHashSet<>();

        public void rule(String op, OpGradient rule) {
            known(op);
            if (rules.putIfAbsent(op, rule) != null || constant.contains(op)) throw new IllegalStateException("gradient of " + op + " registered twice");
        }

        public void constant(String... ops) {
            for (String op : ops) {
                known(op);
                if (rules.containsKey(op) || !constant.add(op)) throw new IllegalStateException("gradient of " + op + " registered twice");
            }
        }

        private static void known(String op) {
            if (OpRegistry.find(op).isEmpty()) throw new IllegalStateException("gradient registered for unknown operator " + op);
        }
    }

    private static OpGradients build() {
        Registrar r = new Registrar();
        ElementwiseGradients.register(r);
        ReductionGradients.register(r);
        TransformGradients.register(r);
        NnGradients.register(r);
        ConvPoolGradients.register(r);
        LossGradients.register(r);
        return new OpGradients(r.rules, r.constant);
    }

    public static OpGradients get() {
        return INSTANCE;
    }

    public Optional<OpGradient> rule(String op) {
        return Optional.ofNullable(rules.get(op));
    }

    public boolean isConstant(String op) {
        return constant.contains(op);
    }

    /** Operators with a rule (not counting constant ones). */
    public Set<String> differentiable() {
        return rules.keySet();
    }

    public Set<String> constantOps() {
        return constant;
    }
}
