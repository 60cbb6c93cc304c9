package dev.relayfarm.interp;

import java.time.Duration;

/**
 * Budgets of one evaluation ({@link Interpreter#call}, {@link Interpreter#evaluate},
 * {@link Interpreter#apply}): past any of them evaluation stops with an {@link InterpreterException}
 * whose {@link InterpreterException#budget()} names it, with its value and the function running.
 * Each is measured by the machine itself, so a runaway program stops deterministically (steps, stack,
 * tensor size) or on time, never by exhausting the heap.
 *
 * @param maxSteps machine transitions (one per expression entered and per value handed to a
 *     continuation): bounds endless tail recursion and loops, which run in constant memory.
 *     The interpreter makes ~15-50 million per second; the shared ONNX models need at most 1,700 and
 *     the ONNX node suite (Loop and Scan included) at most 615 (measured), so the default, 50
 *     million, stops a runaway loop in 1-3 s and still allows a Relay program a million iterations
 *     of a fifty-step loop body.
 * @param timeout wall-clock time from the start of the evaluation, checked every 1,024 steps (an
 *     operator kernel already running finishes first); null for none, the default, because kernel
 *     time depends on the machine while steps do not
 * @param maxStackDepth continuation frames: bounds non-tail recursion, which would otherwise grow
 *     the heap until OutOfMemoryError (about 0.5 KiB per level with its frame); 1 million levels is
 *     100x the deepest recursion the tests run and a few hundred MiB at most
 * @param maxTensorBytes bytes of one operator result: exponential growth (a tensor concatenated with
 *     itself in a loop) or {@code zeros} of a huge shape stops before the allocation, as the result
 *     size is predicted from the operator's type relation for any call that has attributes, no inputs
 *     or 64 KiB of inputs (smaller element-wise calls cannot produce near the default), and checked
 *     on every result. The default, 1 GiB, is far above any activation of the shared models (a few
 *     MiB), and a doubling loop reaches it in seconds.
 */
public record InterpreterOptions(long maxSteps, Duration timeout, int maxStackDepth, long maxTensorBytes) {
    public static final long DEFAULT_MAX_STEPS = 50_000_000L;
    public static final int DEFAULT_MAX_STACK_DEPTH = 1_000_000;
    public static final long DEFAULT_MAX_TENSOR_BYTES = 1L << 30;

    public static final InterpreterOptions DEFAULT = new InterpreterOptions(DEFAULT_MAX_STEPS, null, DEFAULT_MAX_STACK_DEPTH, DEFAULT_MAX_TENSOR_BYTES);

    /** Which budget ran out. */
    public enum Budget {
        STEPS("maxSteps", "--max-steps"),
        TIMEOUT("timeout", "--timeout"),
        STACK_DEPTH("maxStackDepth", "--max-stack"),
        TENSOR_BYTES("maxTensorBytes", "--max-tensor"),
        /** The thread was interrupted (a cancelled job). */
        INTERRUPTED("", "");

        /** The record component that sets it, and the {@code relayc run} option. */
        public final String option;
        public final String cliOption;

        Budget(String option, String cliOption) {
            this.option = option;
            this.cliOption = cliOption;
        }
    }

    public InterpreterOptions {
        if (maxSteps < 1) throw new IllegalArgumentException("maxSteps must be at least 1, got " + maxSteps);
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        if (maxStackDepth < 1) throw new IllegalArgumentException("maxStackDepth must be at least 1, got " + maxStackDepth);
        if (maxTensorBytes < 1) throw new IllegalArgumentException("maxTensorBytes must be at least 1, got " + maxTensorBytes);
    }

    public InterpreterOptions withMaxSteps(long v) {
        return new InterpreterOptions(v, timeout, maxStackDepth, maxTensorBytes);
    }

    public InterpreterOptions withTimeout(Duration v) {
        return new InterpreterOptions(maxSteps, v, maxStackDepth, maxTensorBytes);
    }

    public InterpreterOptions withMaxStackDepth(int v) {
        return new InterpreterOptions(maxSteps, timeout, v, maxTensorBytes);
    }

    public InterpreterOptions withMaxTensorBytes(long v) {
        return new InterpreterOptions(maxSteps, timeout, maxStackDepth, v);
    }
}
