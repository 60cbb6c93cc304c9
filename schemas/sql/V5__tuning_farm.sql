-- The tuning farm (issue 16, ARCHITECTURE.md section 5): tuner workers take tuning_tasks, hardware agents measure,
-- every trial lands once in tuning_records, the best becomes a schedules row that a reviewer decides on.

-- What a user or a job asked the farm to tune: the tasks of one optimized module for one device class.
CREATE TABLE tuning_runs (
    id              BIGSERIAL PRIMARY KEY,
    job_id          UUID REFERENCES jobs (id),            -- the job whose module is tuned (tune=budget, or a run from a job)
    model_name      TEXT        NOT NULL,
    ir_ref          TEXT        NOT NULL,                 -- the optimized module (IrStore reference) the tasks come from
    target          TEXT        NOT NULL,
    device_class    TEXT        NOT NULL,
    strategy        TEXT        NOT NULL,
    budget_ms       BIGINT      NOT NULL,                 -- wall-clock budget of the run
    trials_per_task INT         NOT NULL,
    status          TEXT        NOT NULL DEFAULT 'RUNNING' CHECK (status IN ('RUNNING', 'DONE', 'CANCELLED', 'FAILED')),
    created_by      TEXT        NOT NULL,                 -- the token's name
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A task is shared by every run that needs its workload (same workload, target and device class tuned once).
CREATE TABLE tuning_run_tasks (
    run_id  BIGINT NOT NULL REFERENCES tuning_runs (id),
    task_id BIGINT NOT NULL REFERENCES tuning_tasks (id),
    PRIMARY KEY (run_id, task_id)
);

ALTER TABLE tuning_tasks
    ADD COLUMN ir_ref          TEXT,                      -- a module holding the workload (the first run's)
    ADD COLUMN trials_budget   INT              NOT NULL DEFAULT 64,
    ADD COLUMN batch           INT              NOT NULL DEFAULT 8,
    ADD COLUMN deadline        TIMESTAMPTZ,               -- the worker stops searching at this time
    ADD COLUMN calls           INT              NOT NULL DEFAULT 1,   -- kernel calls per model run (its weight)
    ADD COLUMN default_cost_us DOUBLE PRECISION,
    ADD COLUMN best_cost_us    DOUBLE PRECISION,
    ADD COLUMN best_config     JSONB,
    ADD COLUMN worker          TEXT,                      -- the worker working on it (last one)
    ADD COLUMN attempts        INT              NOT NULL DEFAULT 0,   -- workers that started it (resumes = attempts - 1)
    ADD COLUMN note            TEXT,                      -- why it ended (space exhausted, budget, error)
    ADD COLUMN finished_at     TIMESTAMPTZ;
-- One live task per (workload, target, device class): a second run or job joins it instead of tuning again.
CREATE UNIQUE INDEX tuning_tasks_live ON tuning_tasks (workload_key, target, device_class) WHERE status IN ('PENDING', 'RUNNING');

-- Exactly once: a measure request's measurements are written once, whichever agent measured it and however often
-- its result was delivered (position 0 is the batch's default, 1.. its candidates in request order).
ALTER TABLE tuning_records
    ADD COLUMN request_id UUID,
    ADD COLUMN position   INT;
CREATE UNIQUE INDEX tuning_records_once ON tuning_records (request_id, position) WHERE request_id IS NOT NULL;
CREATE INDEX tuning_records_task ON tuning_records (task_id);

ALTER TABLE devices
    ADD COLUMN compiler          TEXT,
    ADD COLUMN relayfarm_version TEXT,
    ADD COLUMN hardware          JSONB   NOT NULL DEFAULT '{}',
    ADD COLUMN in_flight         INT     NOT NULL DEFAULT 0,     -- candidates being measured now
    ADD COLUMN measured          BIGINT  NOT NULL DEFAULT 0,     -- measurements reported, all time
    ADD COLUMN failures          JSONB   NOT NULL DEFAULT '{}',  -- {"TIMEOUT": n, ...}
    ADD COLUMN pid               BIGINT;

-- Schedules are per device class: a config measured on one class is not evidence for another. Rows from before this
-- migration stand for "the target's device" (the library's Device.UNKNOWN_CLASS).
ALTER TABLE schedules
    ADD COLUMN device_class TEXT   NOT NULL DEFAULT 'unknown',
    ADD COLUMN task_id      BIGINT REFERENCES tuning_tasks (id),
    ADD COLUMN measurements INT    NOT NULL DEFAULT 1,           -- independent measurements of the config (auto-approve needs >= 2)
    DROP CONSTRAINT schedules_workload_key_target_key,
    ADD CONSTRAINT schedules_key UNIQUE (workload_key, target, device_class);

-- Every decision on a schedule, never updated: proposals by workers, approvals, rejections and pins by reviewers.
CREATE TABLE schedule_history (
    id          BIGSERIAL PRIMARY KEY,
    schedule_id BIGINT      NOT NULL REFERENCES schedules (id),
    action      TEXT        NOT NULL CHECK (action IN ('PROPOSED', 'APPROVED', 'REJECTED', 'PINNED', 'AUTO_APPROVED')),
    status      TEXT        NOT NULL,                   -- the schedule's status after it
    actor       TEXT        NOT NULL,                   -- a reviewer's token name, or the worker
    note        TEXT,
    config      JSONB       NOT NULL,
    cost_us     DOUBLE PRECISION,
    at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX schedule_history_schedule ON schedule_history (schedule_id, id);
