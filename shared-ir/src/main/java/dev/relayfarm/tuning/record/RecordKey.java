package dev.relayfarm.tuning.record;

import java.util.Objects;

/**
 * What makes two records' costs comparable: the same workload, built for the same target by the same C compiler,
 * measured on the same device class. Records are grouped by it for "best", statistics and applying; a record is never
 * compared with (or applied in place of) one of another key (the MetaSchedule database ignored the target:
 * apache/tvm#15549).
 */
public record RecordKey(String workloadKey, String target, String deviceClass, String compiler) {
    public RecordKey {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(deviceClass, "deviceClass");
        Objects.requireNonNull(compiler, "compiler");
    }
}
