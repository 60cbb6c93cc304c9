package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every registered gradient against central finite differences in float64 (relative error below 1e-5), one
 * case list per family of rules; a rule without a case fails {@link #everyRuleHasACase}.
 */
class OpGradientsCheckTest {
    static final double TOLERANCE = 1e-5;

    static List<GradientCase> all() {
        return Stream.of(ElementwiseGradientCases.cases(), ReductionGradientCases.cases(), TransformGradientCases.cases(),
                NnGradientCases.cases(), ConvPoolGradientCases.cases(), LossGradientCases.cases()).flatMap(List::stream).toList();
    }

    @TestFactory
    Stream<DynamicTest> finiteDifferences() {
        return all().stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> check(c)));
    }

    static void check(GradientCase c) {
        IRModule m = ReverseModeTest.parse(c.program());
        assertTrue(c.isCalledIn(m), "the case for " + c.op() + " does not call it");
        List<NDArray> inputs = new ArrayList<>();
        long seed = c.op().hashCode();
        for (Var p : m.main().orElseThrow().params()) inputs.add(GradientCheck.uniform((TensorType) p.annotation(), c.lo(), c.hi(), seed++));
        GradientCheck.Report report = GradientCheck.check(m, inputs, 1e-6, 11);
        assertTrue(!report.params().isEmpty(), c.op() + ": nothing to check");
        assertTrue(report.worstRelativeError() < TOLERANCE, c + "\n" + report);
    }

    @Test
    void everyRuleHasACase() {
        Set<String> covered = all().stream().map(GradientCase::op).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>(OpGradients.get().differentiable());
        missing.removeAll(covered);
        assertTrue(missing.isEmpty(), "gradients without a finite-difference case: " + missing);
    }
}
