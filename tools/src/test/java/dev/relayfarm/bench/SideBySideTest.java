package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.NDArray;
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
    void eachEngineRunsWarmUpThenTwicePerRoundAndItsOwnTimesComeBackInItsRow() {
        Sleeper fast = new Sleeper(1), slow = new Sleeper(6), middle = new Sleeper(3);
        double[][] t = SideBySide.alternate(List.of(fast, slow, middle), List.of(), 2, 5);
        for (Sleeper s : List.of(fast, slow, middle)) assertEquals(2 + 2 * 5, s.runs, s.name());
        assertEquals(3, t.length);
        // rows follow the runners' order whatever the shuffled run order was: each row holds its own engine's times
        assertTrue(SideBySide.percentile(t[0], 0.5) < SideBySide.percentile(t[2], 0.5), "fast row below middle row");
        assertTrue(SideBySide.percentile(t[2], 0.5) < SideBySide.percentile(t[1], 0.5), "middle row below slow row");
        for (double ms : t[1]) assertTrue(ms >= 6, "a timed run of the 6 ms engine took " + ms + " ms");
    }

    @Test
    void theShuffleIsSeededSoARunIsRepeatable() {
        List<Integer> first = order(), second = order();
        assertEquals(first, second);
        assertTrue(first.stream().distinct().count() > 1, "runs in more than one order over 20 rounds: " + first);
    }

    /** The index of the engine that ran first in each of 20 rounds. */
    private static List<Integer> order() {
        List<Integer> calls = new ArrayList<>();
        List<ModelRunner> runners = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            int id = k;
            runners.add(new ModelRunner() {
                @Override
                public String name() {
                    return "r" + id;
                }

                @Override
                public List<NDArray> run(List<NDArray> inputs) {
                    calls.add(id);
                    return List.of();
                }

                @Override
                public void close() {}
            });
        }
        SideBySide.alternate(runners, List.of(), 1, 20);
        // one warm-up round of 3 runs, then rounds of 6: each engine twice back to back
        List<Integer> firsts = new ArrayList<>();
        for (int r = 0; r < 20; r++) {
            int start = 3 + 6 * r;
            for (int k = 0; k < 6; k += 2) assertEquals(calls.get(start + k), calls.get(start + k + 1), "an engine runs twice back to back");
            firsts.add(calls.get(start));
        }
        return firsts;
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
}
