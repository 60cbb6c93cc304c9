package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Property test of every registered pass and of the -O1/-O2/-O3 pipelines over random well-typed
 * programs ({@link TypedPrograms}): the output must stay well-formed and well-typed (the pass
 * manager checks both in debug mode) and {@code @main} must compute the same values as before on
 * random inputs. Passes are taken from {@link PassRegistry#all()}, so a newly registered pass is
 * covered without touching this file.
 *
 * <p>100 programs per pass by default, 1000 with {@code -Plong}; {@code -Drelayfarm.seed=S} starts
 * the seeds at S to explore further. A failure names the pass and the seed and prints the program
 * (and the pass's output when there is one); {@code TypedPrograms.generate(seed)} rebuilds it.
 */
class PassPropertyTest {
    private static final int N = Boolean.getBoolean("relayfarm.long") ? 1000 : 100;
    private static final long BASE = Long.getLong("relayfarm.seed", 0L);
    private static final Tolerance TOLERANCE = new Tolerance(1e-4, 1e-5);

    @TestFactory
    Stream<DynamicTest> everyRegisteredPassKeepsResults() {
        return PassRegistry.all().stream().map(p -> dynamicTest(p.name(),
                () -> check(p.name(), m -> PassAssert.run(p.name(), m).module())));
    }

    @TestFactory
    Stream<DynamicTest> optPipelinesKeepResults() {
        return Stream.of(1, 2, 3).map(level -> dynamicTest("-O" + level, () -> check("-O" + level,
                m -> OptPipeline.build().run(m, new PassContext(OptPipeline.options(level, Set.of()).withValidate(true))).module())));
    }

    /**
     * Passes in random orders and combinations (2 to 4 of them, repeats allowed): a pass must also
     * cope with what the others produce (fused Primitive functions, layout transforms, folded weights).
     * The sequence for program {@code seed} is drawn from {@code seed}, so a failure reproduces.
     */
    @Test
    void randomPassSequencesKeepResults() {
        Map<Long, String> sequences = new HashMap<>();
        StringBuilder report = new StringBuilder();
        List<Long> failing = failures("a random pass sequence", (seed, m) -> {
            String seq = sequence(seed);
            sequences.put(seed, seq);
            return PassAssert.run(seq, m).module();
        }, report);
        if (!failing.isEmpty()) {
            List<String> which = failing.stream().map(seed -> seed + ": " + sequences.get(seed)).toList();
            fail(failing.size() + " of " + N + " programs fail (seed: passes " + which + ")\n" + report);
        }
    }

    /** The comma-separated pass sequence the random-sequence property uses for program {@code seed}. */
    static String sequence(long seed) {
        List<String> names = PassRegistry.all().stream().map(Pass::name).toList();
        Random r = new Random(seed * 31 + 17);
        List<String> seq = new ArrayList<>();
        for (int i = 2 + r.nextInt(3); i > 0; i--) seq.add(names.get(r.nextInt(names.size())));
        return String.join(",", seq);
    }

    /** The checker itself: a "pass" that turns tanh into sigmoid must be caught, with its seed and program. */
    @Test
    void catchesAPassThatChangesResults() {
        StringBuilder report = new StringBuilder();
        List<Long> failing = failures("tanh-to-sigmoid", (seed, m) -> {
            Function main = m.main().orElseThrow();
            Expr body = new ExprRewriter() {
                @Override
                protected Expr rewrite(Expr pre, Expr post) {
                    return post instanceof Call c && c.callee() instanceof Op op && op.name().equals("tanh")
                            ? new Call(Op.get("sigmoid"), c.args()) : post;
                }
            }.rewrite(main.body());
            return m.withFunction("main", main.withBody(body));
        }, report);
        assertFalse(failing.isEmpty());
        assertTrue(report.toString().contains("tanh-to-sigmoid fails on TypedPrograms.generate(" + failing.get(0) + "L)"), report.toString());
        assertTrue(report.toString().contains("def @main"), report.toString());
    }

    private static void check(String what, UnaryOperator<IRModule> transform) {
        StringBuilder report = new StringBuilder();
        int[] changed = {0};
        List<Long> failing = failures(what, (seed, m) -> {
            IRModule out = transform.apply(m);
            if (out != m) changed[0]++;
            return out;
        }, report);
        // How much of the generated input a pass actually rewrites: a pass that never fires is not being tested.
        System.out.printf("pass-property %-28s changed %4d of %d programs%n", what, changed[0], N);
        if (!failing.isEmpty()) fail(failing.size() + " of " + N + " programs fail (seeds " + failing + ")\n" + report);
    }

    /** The seeds whose program {@code transform} breaks; the first failure is described in {@code report}. */
    private static List<Long> failures(String what, java.util.function.BiFunction<Long, IRModule, IRModule> transform, StringBuilder report) {
        List<Long> failing = new ArrayList<>();
        for (long seed = BASE; seed < BASE + N; seed++) {
            IRModule in = TypedPrograms.generate(seed);
            IRModule out = null;
            try {
                in = TypeInference.infer(in).module();
                out = transform.apply(seed, in);
                // Two input draws: one may miss a difference the other shows (a branch not taken).
                SameResults.assertSameResults(in, out, seed, TOLERANCE);
                SameResults.assertSameResults(in, out, seed + 7919, TOLERANCE);
            } catch (RuntimeException | AssertionError e) {
                failing.add(seed);
                if (report.isEmpty()) {
                    report.append(what).append(" fails on TypedPrograms.generate(").append(seed).append("L): ").append(e)
                            .append("\n--- program:\n").append(RelayPrinter.print(in));
                    if (out != null) report.append("\n--- after ").append(what).append(":\n").append(RelayPrinter.print(out));
                }
            }
        }
        return failing;
    }
}
