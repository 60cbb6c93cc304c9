package dev.relayfarm.ad;

/**
 * The reverse-mode rule of every differentiable operator, registered in code beside the operator families (each family
 * of rules in its own class); see {@link RuleTable} for constant operators and the checks made while registering.
 */
public final class OpGradients {
    private static final RuleTable<OpGradient> TABLE = build();

    private OpGradients() {}

    private static RuleTable<OpGradient> build() {
        RuleTable.Registrar<OpGradient> r = new RuleTable.Registrar<>("gradient");
        ElementwiseGradients.register(r);
        ReductionGradients.register(r);
        TransformGradients.register(r);
        NnGradients.register(r);
        ConvPoolGradients.register(r);
        LossGradients.register(r);
        return r.build();
    }

    public static RuleTable<OpGradient> get() {
        return TABLE;
    }
}
