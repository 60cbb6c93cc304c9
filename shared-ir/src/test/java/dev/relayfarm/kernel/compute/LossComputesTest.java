package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;

import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The loss operators through {@link OpComputes}, compiled and compared with the interpreter (probabilities in (0.05, 1) for the log). */
class LossComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    private static final OpKernelCases.Gen PROB = uniform(0.05, 1);

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String t : new String[] {"float32", "float64"}) {
            CASES.add("fn (%p: Tensor[(4, 10), " + t + "], %t: Tensor[(4, 10), " + t + "]) { nn.cross_entropy(%p, %t) }", PROB, PROB);
            CASES.add("fn (%p: Tensor[(1, 3), " + t + "], %t: Tensor[(1, 3), " + t + "]) { nn.cross_entropy(%p, %t) }", PROB, PROB);
            CASES.add("fn (%p: Tensor[(4, 10), " + t + "], %t: Tensor[(4, 10), " + t + "]) { nn.cross_entropy_with_logits(%p, %t) }");
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(5);
    }
}
