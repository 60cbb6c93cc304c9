package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs one relation outside the solver, forward only: inputs are known, the output is a fresh hole
 * the relation fills. Used as the operators' shape function and in relation unit tests; the full
 * solver (with unification across a program) is {@code TypeInference}.
 */
public final class ForwardReporter implements TypeReporter {
    private final Map<IncompleteType, Type> solved = new IdentityHashMap<>();

    private ForwardReporter() {}

    public static Optional<Type> apply(OpDef<?> op, List<Type> inputs, Attrs attrs) {
        ForwardReporter reporter = new ForwardReporter();
        IncompleteType out = IncompleteType.fresh();
        List<Type> types = new ArrayList<>(inputs);
        types.add(out);
        if (!op.solve(types, attrs, reporter)) return Optional.empty();
        Type result = reporter.resolve(out);
        return result instanceof IncompleteType ? Optional.empty() : Optional.of(result);
    }

    @Override
    public void assign(Type a, Type b) {
        Type ra = resolve(a);
        Type rb = resolve(b);
        if (ra instanceof IncompleteType ia) {
            solved.put(ia, rb);
        } else if (rb instanceof IncompleteType ib) {
            solved.put(ib, ra);
        } else if (!ra.equals(rb)) {
            throw new RelationException("expected " + ra + " but got " + rb);
        }
    }

    @Override
    public Type resolve(Type t) {
        while (t instanceof IncompleteType i && solved.containsKey(i)) t = solved.get(i);
        return t;
    }
}
