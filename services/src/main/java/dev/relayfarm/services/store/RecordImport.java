package dev.relayfarm.services.store;

/**
 * What {@link TuningRecords#importAll} did.
 *
 * @param imported records added
 * @param skipped  records already there (same workload, config, target, device class, compiler, time and cost), or
 *                 repeated within the import
 */
public record RecordImport(int imported, int skipped) {
}
