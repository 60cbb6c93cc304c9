package dev.relayfarm.tuning.search;

/**
 * Stops a task's search once {@code patience} trials in a row found nothing faster (AutoTVM's {@code
 * early_stopping}): the tuner's budget then goes to tasks that still improve.
 */
public record EarlyStopping(int patience) {
    public EarlyStopping {
        if (patience < 1) throw new IllegalArgumentException("early stopping needs a patience of at least 1 trial, got " + patience);
    }

    public boolean shouldStop(SearchHistory history) {
        return history.trialsSinceImprovement() >= patience;
    }
}
