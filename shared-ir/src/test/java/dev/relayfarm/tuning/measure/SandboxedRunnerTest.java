package dev.relayfarm.tuning.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.lower.LoweringObserver;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.process.ChildProcess;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandboxed runner on real kernels, built by the real C compiler and run in child processes: real tasks measure
 * to costs, and broken candidates (edited C of a real kernel) to typed failures while the batch goes on. Timings on a
 * loaded machine are only checked for being positive, finite and of one order of magnitude.
 */
class SandboxedRunnerTest {
    /** One compiler cache for the class (the measurement programs of a kernel are built once). */
    @TempDir
    static Path cache;

    private static CCompiler compiler;

    @TempDir
    Path work;

    @BeforeAll
    static void compiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        compiler = CCompiler.host().orElseThrow().withCache(cache);
    }

    private SandboxedRunner runner(MeasureOptions options) {
        return new SandboxedRunner(compiler, options, work);
    }

    private static Measurement.Cost cost(Measurement m) {
        return assertInstanceOf(Measurement.Cost.class, m.outcome(), () -> m.config() + ": " + m.outcome());
    }

    private static void assertSaneCost(Measurement.Cost c, MeasureOptions o) {
        assertTrue(c.medianUs() > 0 && Double.isFinite(c.medianUs()), c.toString());
        assertTrue(c.cv() >= 0 && Double.isFinite(c.cv()), c.toString());
        assertTrue(c.number() >= o.number(), c.toString());
        assertEquals(o.repeat(), c.repeat(), c.toString());
    }

    @Test
    void measuresConfigsOfADenseTaskAgainstItsDefault() {
        TuningTask task = MeasureModels.dense();
        List<ScheduleConfig> configs = new ArrayList<>(MeasureModels.others(task, 3));
        assertEquals(3, configs.size(), task.space().toString());
        configs.add(task.defaultConfig());
        MeasuredBatch batch = runner(MeasureOptions.FAST).measureWithBaseline(task, configs);

        assertEquals(task.defaultConfig(), batch.baseline().config());
        assertEquals(task.key(), batch.baseline().workloadKey());
        assertSaneCost(cost(batch.baseline()), MeasureOptions.FAST);
        assertEquals(configs, batch.results().stream().map(Measurement::config).toList(), "one measurement per config, in order");
        for (Measurement m : batch.results()) {
            assertEquals(task.key(), m.workloadKey());
            assertSaneCost(cost(m), MeasureOptions.FAST);
        }
        // the default among the configs is the baseline's measurement, not a second run
        assertEquals(batch.baseline().outcome(), batch.results().getLast().outcome());
    }

    @Test
    void eachConfigIsLoweredOnceOnTheCallingThread() {
        TuningTask task = MeasureModels.dense();
        ScheduleConfig other = MeasureModels.others(task, 1).getFirst();
        List<ScheduleConfig> seen = new ArrayList<>();
        LoweringObserver.observing((plan, config) -> seen.add(config),
                () -> runner(MeasureOptions.FAST).measureWithBaseline(task, List.of(other, task.defaultConfig(), other)));
        // the default (the reference, also among the configs) once; the other config once per time it was asked for
        assertEquals(List.of(task.defaultConfig(), other, other), seen);
    }

    @Test
    void measuresAConvTaskThroughTheMeasurerInterface() {
        TuningTask task = MeasureModels.conv();
        List<ScheduleConfig> configs = MeasureModels.others(task, 2);
        dev.relayfarm.tuning.Measurer measurer = runner(MeasureOptions.FAST.withThreads(2));
        List<Measurement> out = measurer.measure(task, configs);
        assertEquals(2, out.size());
        for (Measurement m : out) assertSaneCost(cost(m), MeasureOptions.FAST);
    }

    @Test
    void numberIsRaisedUntilARepeatLastsMinRepeatMs() {
        // the dense kernel takes microseconds: one call per repeat would time the clock, not the kernel
        MeasureOptions options = MeasureOptions.FAST.withRepeat(3, 5);
        Measurement.Cost c = cost(runner(options).measureWithBaseline(MeasureModels.dense(), List.of()).baseline());
        assertTrue(c.number() >= 50, "a 5 ms repeat of a kernel of a few µs makes hundreds of calls, even slowed down 10x: " + c);
    }

    @Test
    void aConfigLoweringRefusesIsACompileError() {
        TuningTask task = MeasureModels.dense();
        ScheduleConfig bogus = new ScheduleConfig(task.template(), Map.of("no_such_knob", 3));
        List<Measurement> out = runner(MeasureOptions.FAST).measure(task, List.of(bogus, MeasureModels.others(task, 1).getFirst()));
        Measurement.Failure f = assertInstanceOf(Measurement.Failure.class, out.get(0).outcome());
        assertEquals(MeasureError.COMPILE_ERROR, f.error());
        assertTrue(f.detail().startsWith("lowering:"), f.detail());
        cost(out.get(1));
    }

    /**
     * The broken candidates in one batch, between good ones: each fails with its own error, the good ones
     * after them still measure, and the hanging one (which forked) leaves no process behind.
     */
    @Test
    void brokenCandidatesFailTypedAndTheBatchCarriesOn() throws Exception {
        assumeTrue(ChildProcess.isolatesGroups(), "no setsid: no process groups");
        TuningTask task = MeasureModels.dense();
        Candidate reference = Candidate.lower(task, task.defaultConfig());
        Candidate good = Candidate.lower(task, MeasureModels.others(task, 1).getFirst());
        List<Candidate> batch = List.of(
                good,
                BrokenKernels.writesOutOfBounds(reference),
                BrokenKernels.loopsForever(reference),
                BrokenKernels.computesWrongAnswer(reference),
                BrokenKernels.allocatesTooMuch(reference),
                BrokenKernels.doesNotCompile(reference),
                good);
        MeasureOptions options = MeasureOptions.FAST.withRunTimeout(Duration.ofSeconds(2));
        long start = System.nanoTime();
        MeasuredBatch out = runner(options).measureCandidates(reference, batch);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        cost(out.baseline());
        List<Measurement> r = out.results();
        assertEquals(batch.size(), r.size());
        cost(r.get(0));
        assertFailure(r.get(1), MeasureError.RUNTIME_ERROR, "SIGSEGV");
        assertFailure(r.get(2), MeasureError.TIMEOUT, "2 s");
        assertFailure(r.get(3), MeasureError.WRONG_ANSWER, "values differ");
        assertFailure(r.get(4), MeasureError.RUNTIME_ERROR, "kernel returned an error");
        assertFailure(r.get(5), MeasureError.COMPILE_ERROR, "not C");
        cost(r.get(6));
        assertTrue(took.compareTo(Duration.ofSeconds(60)) < 0, "one hang costs its timeout, not the batch: " + took);

        // the hanging program and the child it forked died with their group; the run's directory is gone
        List<ProcessHandle> left = ProcessHandle.allProcesses()
                .filter(p -> p.info().command().map(c -> c.startsWith(cache.toString())).orElse(false)).toList();
        left.forEach(ProcessHandle::destroyForcibly); // never leave a spinning process on a shared machine
        assertEquals(List.of(), left.stream().map(p -> p.pid() + " " + p.info().command().orElse("?")).toList(), "processes outlived the timeout");
        try (Stream<Path> s = Files.list(work)) {
            assertEquals(List.of(), s.toList(), "each run's temporary directory is deleted");
        }
    }

    private static void assertFailure(Measurement m, MeasureError error, String detail) {
        Measurement.Failure f = assertInstanceOf(Measurement.Failure.class, m.outcome(), () -> m.config() + ": " + m.outcome());
        assertEquals(error, f.error(), f.detail());
        assertTrue(f.detail().contains(detail), () -> "detail of " + m.config() + " should mention \"" + detail + "\": " + f.detail());
    }

    @Test
    void aCacheFlushBufferPastTheMemoryLimitIsAnOutOfMemoryError() {
        // the flush buffer (twice the last-level cache) cannot be allocated under a 16 MiB address-space limit;
        // as it is the reference that fails, the batch fails, carrying the reference's failure
        assumeTrue(LastLevelCache.flushBytes() >= 16L << 20, "this machine's cache flush fits in 16 MiB");
        TuningTask task = MeasureModels.dense();
        SandboxedRunner r = runner(MeasureOptions.FAST.withFlushCache(true).withMemoryLimit(16L << 20));
        BaselineFailedException e = assertThrows(BaselineFailedException.class, () -> r.measure(task, List.of()));
        Measurement.Failure f = assertInstanceOf(Measurement.Failure.class, e.baseline().outcome());
        assertEquals(MeasureError.RUNTIME_ERROR, f.error(), f.detail());
        assertTrue(f.detail().contains("out of memory under the 16 MiB limit"), f.detail());
    }

    @Test
    void aBrokenReferenceFailsTheWholeBatch() {
        TuningTask task = MeasureModels.dense();
        Candidate reference = Candidate.lower(task, task.defaultConfig());
        Candidate good = Candidate.lower(task, MeasureModels.others(task, 1).getFirst());
        BaselineFailedException e = assertThrows(BaselineFailedException.class,
                () -> runner(MeasureOptions.FAST).measureCandidates(BrokenKernels.writesOutOfBounds(reference), List.of(good)));
        assertEquals(MeasureError.RUNTIME_ERROR, ((Measurement.Failure) e.baseline().outcome()).error());
        assertTrue(e.getMessage().contains(task.key()) && e.getMessage().contains("no candidate"), e.getMessage());
    }

    @Test
    void theSameConfigMeasuredTwiceAgreesWithinAnOrderOfMagnitude() {
        TuningTask task = MeasureModels.conv();
        ScheduleConfig c = MeasureModels.others(task, 1).getFirst();
        MeasureOptions options = MeasureOptions.FAST.withRepeat(5, 5);
        MeasuredBatch b = runner(options).measureWithBaseline(task, List.of(c, c));
        Measurement.Cost first = cost(b.results().get(0)), second = cost(b.results().get(1));
        assertSaneCost(first, options);
        assertSaneCost(second, options);
        double ratio = first.medianUs() / second.medianUs();
        assertTrue(ratio > 0.1 && ratio < 10, first + " vs " + second);
    }
}
