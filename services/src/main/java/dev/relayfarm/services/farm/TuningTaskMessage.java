package dev.relayfarm.services.farm;

/** A {@code tuning.tasks} message: the task's row in {@code tuning_tasks} holds everything else (key: the id). */
public record TuningTaskMessage(long taskId) {}
