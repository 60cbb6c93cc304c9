package dev.relayfarm.services.store;

import java.util.List;

/**
 * What {@link TuningRuns#cancel} did.
 *
 * @param before           the run's status before (computed, so a run whose tasks all ended is DONE, not RUNNING)
 * @param cancelled        whether the run is now CANCELLED (only a RUNNING run can be)
 * @param cancelledTaskIds its live tasks that no other RUNNING run needs, now CANCELLED; shared ones go on
 */
public record TuningRunCancel(String before, boolean cancelled, List<Long> cancelledTaskIds) {
    public TuningRunCancel {
        cancelledTaskIds = List.copyOf(cancelledTaskIds);
    }
}
