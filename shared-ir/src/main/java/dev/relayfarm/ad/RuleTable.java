package dev.relayfarm.ad;

import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Per-operator rules of one kind (reverse-mode {@link OpGradient}s, forward-mode {@link OpTangent}s), registered in
 * code by family; a name registered twice, or one the operator registry lacks, fails fast. Operators whose result is
 * piecewise constant in their inputs (comparisons, rounding, argmax, constant fills) are registered as
 * {@linkplain #isConstant constant}: their derivative is zero almost everywhere, so they need no rule.
 *
 * @param <R> the rule type
 */
public final class RuleTable<R> {
    private final Map<String, R> rules;
    private final Set<String> constant;

    private RuleTable(Map<String, R> rules, Set<String> constant) {
        this.rules = Collections.unmodifiableMap(rules);
        this.constant = Collections.unmodifiableSet(constant);
    }

    /** Collects the families' registrations. */
    public static final class Registrar<R> {
        private final String kind;
        private final Map<String, R> rules = new LinkedHashMap<>();
        private final Set<String> constant = new LinkedHashSet<>();

        Registrar(String kind) {
            this.kind = kind;
        }

        public void rule(String op, R rule) {
            known(op);
            if (rules.putIfAbsent(op, rule) != null || constant.contains(op)) throw new IllegalStateException(kind + " of " + op + " registered twice");
        }

        public void constant(String... ops) {
            for (String op : ops) {
                known(op);
                if (rules.containsKey(op) || !constant.add(op)) throw new IllegalStateException(kind + " of " + op + " registered twice");
            }
        }

        private void known(String op) {
            if (OpRegistry.find(op).isEmpty()) throw new IllegalStateException(kind + " registered for unknown operator " + op);
        }

        RuleTable<R> build() {
            return new RuleTable<>(rules, constant);
        }
    }

    public Optional<R> rule(String op) {
        return Optional.ofNullable(rules.get(op));
    }

    public boolean isConstant(String op) {
        return constant.contains(op);
    }

    /** Operators with a rule (not counting constant ones). */
    public Set<String> differentiable() {
        return rules.keySet();
    }
}
