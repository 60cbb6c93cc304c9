package dev.relayfarm.compile;

import java.util.List;

/** One action of the graph executor, in execution order. */
public sealed interface Step {
    /** Runs kernel {@code kernel} (an index into {@link GraphPlan#kernels()}) on {@code args} then {@code results}. */
    record KernelCall(int kernel, List<Slot> args, List<Slot> results) implements Step {
        public KernelCall {
            args = List.copyOf(args);
            results = List.copyOf(results);
        }
    }

    /**
     * Copies {@code bytes} from {@code src} to an output: for graph outputs that no kernel writes
     * (an input or a constant returned as is, or one value returned twice).
     */
    record Copy(Slot src, Slot.Output dst, long bytes) implements Step {}
}
