package dev.relayfarm.services.store;

/** Which tuning records {@link TuningRecords#export} writes; a null field does not filter (all exact matches). */
public record RecordFilter(String workload, String target, String deviceClass) {
}
