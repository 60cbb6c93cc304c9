package dev.relayfarm.kernel.schedule;

/**
 * A schedule primitive that does not fit the kernel (unknown stage or axis, vectorizing an axis that
 * is not innermost, ...). The message names the primitive's position, the primitive and the problem,
 * so an autotuner can drop the configuration and a person can fix a hand-written schedule.
 */
public final class ScheduleException extends RuntimeException {
    public ScheduleException(String message) {
        super(message);
    }
}
