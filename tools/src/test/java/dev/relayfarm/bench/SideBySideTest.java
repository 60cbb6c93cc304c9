package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.JvmThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class SideBySideTest {
    /** An engine that takes {@code millis} per run and counts its runs. */
    private static final class Sleeper implements ModelRunner {
        final long millis;
        int runs;

        Sleeper(long millis) {
            this.millis = millis;
        }

        @Override
        public String name() {
            return "sleeper-" + millis;
        }

        @Override
        public List<NDArray> run(List<NDArray> inputs) {
            runs++;
            LockSupport.parkNanos(millis * 1_000_000);
            return List.of();
        }

        @Override
        public void close() {}
    }

    @Test
    void runsForFillsTheMinimumTimeButNeverGoesBelowTheMinimumRuns() {
        int runs = SideBySide.runsFor(new Sleeper(2), List.of(), 5, 100);
        assertTrue(runs >= 20 && runs <= 50, "about 100 ms of 2 ms runs (sleeps overshoot): " + runs);
        assertEquals(30, SideBySide.runsFor(new Sleeper(5), List.of(), 30, 10), "a slow model keeps its minimum runs");
    }

    @Test
    void eachEngineRunsWarmUpThenItsBlockPerRoundAndItsOwnTimesComeBackInItsRow() {
        Sleeper fast = new Sleeper(1), slow = new Sleeper(6), middle = new Sleeper(3);
        double[][] t = SideBySide.alternate(List.of(fast, slow, middle), List.of(), 2, 7);
        // 5 rounds (blocks of 1, 1, 1, 2, 2 timed runs), each after 2 warm-up runs
        for (Sleeper s : List.of(fast, slow, middle)) assertEquals(5 * 2 + 7, s.runs, s.name());
        assertEquals(3, t.length);
        for (double[] row : t) assertEquals(7, row.length);
        // rows follow the runners' order whatever the shuffled run order was: each row holds its own engine's times
        assertTrue(SideBySide.percentile(t[0], 0.5) < SideBySide.percentile(t[2], 0.5), "fast row below middle row");
        assertTrue(SideBySide.percentile(t[2], 0.5) < SideBySide.percentile(t[1], 0.5), "middle row below slow row");
        for (double ms : t[1]) assertTrue(ms >= 6, "a timed run of the 6 ms engine took " + ms + " ms");
    }

    @Test
    void theShuffleIsSeededSoARunIsRepeatable() {
        List<Integer> first = order(), second = order();
        assertEquals(first, second);
        assertTrue(first.stream().distinct().count() > 1, "runs in more than one order over 5 rounds: " + first);
    }

    /** {@code n} engines that log each run and pause into {@code calls} ("run0", "pause1"), each run taking {@code runNanos}. */
    private static List<ModelRunner> recorders(int n, List<String> calls, long runNanos) {
        List<ModelRunner> runners = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int id = k;
            runners.add(new ModelRunner() {
                @Override
                public String name() {
                    return "r" + id;
                }

                @Override
                public List<NDArray> run(List<NDArray> inputs) {
                    calls.add("run" + id);
                    if (runNanos > 0) LockSupport.parkNanos(runNanos);
                    return List.of();
                }

                @Override
                public void pause() {
                    calls.add("pause" + id);
                }
            });
        }
        return runners;
    }

    /** The index of the engine that ran first in each of the 5 rounds; checks that each block ends in a pause. */
    private static List<Integer> order() {
        List<String> calls = new ArrayList<>();
        SideBySide.alternate(recorders(3, calls, 0), List.of(), 1, 20);
        // 5 rounds; in each, every engine: 1 warm-up run, its 4 timed runs back to back, then its pause
        List<Integer> firsts = new ArrayList<>();
        int at = 0;
        for (int r = 0; r < 5; r++) {
            firsts.add(calls.get(at).charAt(3) - '0');
            for (int e = 0; e < 3; e++) {
                String id = calls.get(at).substring(3);
                for (int i = 0; i < 5; i++) assertEquals("run" + id, calls.get(at + i), "round " + r + ": an engine's runs come together");
                assertEquals("pause" + id, calls.get(at + 5), "round " + r + ": a block ends in a pause");
                at += 6;
            }
        }
        assertEquals(calls.size(), at);
        return firsts;
    }

    @Test
    void settlingRunsEveryEngineAlikeUntilTheJitIsIdleThenPausesThem() {
        List<String> calls = new ArrayList<>();
        List<ModelRunner> runners = recorders(2, calls, 1_000_000);
        long start = System.nanoTime();
        int rounds = SideBySide.settle(runners, List.of());
        double seconds = (System.nanoTime() - start) / 1e9;
        // on Linux it waits for a quiet window of its own length at least; elsewhere it cannot tell and does not wait
        assertTrue(JvmThreads.busyTicks() < 0 || (rounds > 0 && seconds >= JvmThreads.QUIET_MS / 1e3), rounds + " rounds in " + seconds + " s");
        assertTrue(seconds < JvmThreads.LIMIT_MS / 1e3 + 5, "bounded: " + seconds + " s");
        for (int r = 0; r < rounds; r++) assertEquals(List.of("run0", "run1"), calls.subList(2 * r, 2 * r + 2), "round " + r);
        assertEquals(List.of("pause0", "pause1"), calls.subList(2 * rounds, calls.size()));
    }

    @Test
    void iterationsMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> SideBySide.alternate(List.of(new Sleeper(0)), List.of(), 0, 0));
    }

    @Test
    void percentileIsTheNearestRankOfTheSortedTimes() {
        assertArrayEquals(new double[] {1, 3, 4}, new double[] {SideBySide.percentile(new double[] {4, 1, 3, 2}, 0.1),
                SideBySide.percentile(new double[] {4, 1, 3, 2}, 0.75), SideBySide.percentile(new double[] {4, 1, 3, 2}, 1)});
    }

    @Test
    void roundRatiosSplitTheRunsAsAlternateDoes() {
        // 12 runs in 5 rounds: 2, 2, 2, 3, 3 (alternate's split); b is a's double but 4x in the fourth round
        double[] a = {1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5};
        double[] b = {2, 2, 4, 4, 6, 6, 16, 16, 16, 10, 10, 10};
        assertArrayEquals(new double[] {2, 2, 2, 4, 2}, SideBySide.roundRatios(a, b, 5), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> SideBySide.roundRatios(a, new double[3], 5));
    }
}
