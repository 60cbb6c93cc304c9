package dev.relayfarm.ops.nn;

import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * Runs independent tasks on the common ForkJoin pool when the work is large enough to pay for the
 * hand-off; small kernels (the many tiny tensors of unit tests and constant folding) stay on the caller.
 */
public final class Parallel {
    /** Below this many multiply-adds the fork/join overhead outweighs a second core. */
    private static final long MIN_WORK = 200_000;

    private Parallel() {}

    public static void forEach(int tasks, long totalWork, IntConsumer body) {
        if (tasks <= 1 || totalWork < MIN_WORK) {
            for (int t = 0; t < tasks; t++) body.accept(t);
        } else {
            IntStream.range(0, tasks).parallel().forEach(body);
        }
    }
}
