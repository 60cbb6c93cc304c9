package dev.relayfarm.services.store;

import java.util.List;

/**
 * One row of the dashboard's review queue: a schedule with what a reviewer weighs it by.
 *
 * @param models      the models whose tuning runs tuned this workload (on this target and device class), each with the
 *                    workload's share of that model's tunable kernel time
 * @param newJobsGet  the schedule a job compiled now would apply for the workload ({@link ScheduleStore#choose}); null:
 *                    the template default
 */
public record ReviewItem(ScheduleRow schedule, List<ModelShare> models, NewJobsGet newJobsGet) {
    public ReviewItem {
        models = List.copyOf(models);
    }

    /**
     * @param share calls x template-default cost of the workload over the same sum for all the run's tasks; null when
     *              the run's defaults were not measured yet
     */
    public record ModelShare(String model, Double share) {}

    /** Which stored schedule applies to the workload for new jobs, and its status; id null means the template default. */
    public record NewJobsGet(Long scheduleId, String status) {
        public boolean isDefault() {
            return scheduleId == null;
        }
    }
}
