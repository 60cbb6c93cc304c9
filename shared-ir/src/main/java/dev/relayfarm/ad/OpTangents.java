package dev.relayfarm.ad;

import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tangent rule of every operator {@link ForwardMode} can push a tangent through, registered in code by
 * family (each family in its own class; a name registered twice, or one the operator registry lacks, fails fast).
 * Operators whose result is piecewise constant in their inputs (comparisons, constant fills) are registered as
 * {@linkplain #isConstant constant}: their result's tangent is zeros, its true value almost everywhere.
 */
public final class OpTangents {
    private static final OpTangents INSTANCE = build();

    private final Map<String, OpTangent> rules;
    private final Set<String> constant;

    private OpTangents(Map<String, OpTangent> rules, Set<String> constant) {
        this.rules = Collections.unmodifiableMap(rules);
        this.constant = Collections.unmodifiableSet(constant);
    }

    /** Collects one family's registrations. */
    public static final class Registrar {
        private final Map<String, OpTangent> rules = new LinkedHashMap<>();
        private final Set<String> constant = new LinkedHashSet<>();

        public void rule(String op, OpTangent rule) {
            known(op);
            if (rules.putIfAbsent(op, rule) != null || constant.contains(op)) throw new IllegalStateException("tangent of " + op + " registered twice");
        }

        public void constant(String... ops) {
            for (String op : ops) {
                known(op);
                if (rules.containsKey(op) || !constant.add(op)) throw new IllegalStateException("tangent of " + op + " registered twice");
            }
        }

        private static void known(String op) {
            if (OpRegistry.find(op).isEmpty()) throw new IllegalStateException("tangent registered for unknown operator " + op);
        }
    }

    private static OpTangents build() {
        Registrar r = new Registrar();
        ElementwiseTangents.register(r);
        ShapeTangents.register(r);
        NnTangents.register(r);
        return new OpTangents(r.rules, r.constant);
    }

    public static OpTangents get() {
        return INSTANCE;
    }

    public Optional<OpTangent> rule(String op) {
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
