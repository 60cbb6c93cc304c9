package dev.relayfarm.services.tuner;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.Candidate;

/**
 * How a worker turns a config into the C an agent builds: {@link Candidate#lower} unless a bean of this type says
 * otherwise — the tests' way to send a deliberately wrong kernel through the real farm and see it recorded as
 * WRONG_ANSWER, never proposed.
 */
@FunctionalInterface
public interface CandidateLowering {
    CandidateLowering LIBRARY = Candidate::lower;

    Candidate lower(TuningTask task, ScheduleConfig config);
}
