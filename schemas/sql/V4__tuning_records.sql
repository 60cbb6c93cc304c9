-- A tuning record carries what makes it trustworthy and shareable (issue 15; the library's TuningRecord, one JSON
-- line per row in a records file, the field names are these columns): the template, the device class and hardware
-- fingerprint it was measured on, the C compiler and RelayFarm version that built it, the spread and counts of the
-- timing, and the template default's cost measured in the same batch. A record is only applied for the same
-- (workload, target, device class, compiler): the MetaSchedule database ignored the target (apache/tvm#15549).
-- Nothing wrote tuning_records before this migration, so the identifying columns can be NOT NULL at once.
ALTER TABLE tuning_records
    ADD COLUMN template          TEXT             NOT NULL,
    ADD COLUMN device_class      TEXT             NOT NULL,
    ADD COLUMN hardware          JSONB            NOT NULL DEFAULT '{}',  -- {"arch", "model", "isa": [...], "cores"}
    ADD COLUMN compiler          TEXT             NOT NULL,               -- CCompiler.identity()
    ADD COLUMN relayfarm_version TEXT             NOT NULL,
    ADD COLUMN cv                DOUBLE PRECISION,                        -- stddev / mean of the repeats; null for an error
    ADD COLUMN number            INT,                                     -- calls per timed repeat
    ADD COLUMN repeat            INT,                                     -- timed repeats
    ADD COLUMN default_cost_us   DOUBLE PRECISION,                        -- the template default, same batch, same device
    ADD CONSTRAINT tuning_records_cost_or_error CHECK ((cost_us IS NULL) <> (error IS NULL));

CREATE INDEX tuning_records_applicable ON tuning_records (workload_key, target, device_class, compiler, cost_us);
