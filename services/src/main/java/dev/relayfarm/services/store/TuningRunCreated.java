package dev.relayfarm.services.store;

import java.util.List;

/**
 * What {@link TuningRuns#create} did.
 *
 * @param newTaskIds    the tasks it inserted (PENDING): the caller sends one {@code tuning.tasks} message for each, after
 *                      the commit, so a worker never looks for a task that is not there yet
 * @param joinedTaskIds the live tasks (PENDING or RUNNING) of other runs it joined: already announced, no message
 */
public record TuningRunCreated(long runId, List<Long> newTaskIds, List<Long> joinedTaskIds) {
    public TuningRunCreated {
        newTaskIds = List.copyOf(newTaskIds);
        joinedTaskIds = List.copyOf(joinedTaskIds);
    }
}
