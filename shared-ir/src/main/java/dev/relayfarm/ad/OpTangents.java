package dev.relayfarm.ad;

/**
 * The tangent rule of every operator {@link ForwardMode} can push a tangent through, registered in code by family;
 * a {@linkplain RuleTable#isConstant constant} operator's result gets a zero tangent.
 */
public final class OpTangents {
    private static final RuleTable<OpTangent> TABLE = build();

    private OpTangents() {}

    private static RuleTable<OpTangent> build() {
        RuleTable.Registrar<OpTangent> r = new RuleTable.Registrar<>("tangent");
        ElementwiseTangents.register(r);
        ShapeTangents.register(r);
        NnTangents.register(r);
        return r.build();
    }

    public static RuleTable<OpTangent> get() {
        return TABLE;
    }
}
