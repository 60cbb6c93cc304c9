-- RelayFarm state (ARCHITECTURE.md section 4). Flyway applies this from the classpath (db/migration);
-- the services module copies schemas/sql there. Later changes are new V<n>__*.sql files, never edits.

-- Content-addressed bytes: models, IR documents, tensor blobs (claim-check), artifact tarballs.
CREATE TABLE blobs (
    sha256     CHAR(64) PRIMARY KEY,
    size_bytes BIGINT      NOT NULL,
    bytes      BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
    id            UUID PRIMARY KEY,
    status        TEXT        NOT NULL CHECK (status IN ('QUEUED', 'IMPORTING', 'TYPING', 'OPTIMIZING', 'TUNING',
                                                         'GENERATING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
    model_name    TEXT        NOT NULL,
    model_format  TEXT        NOT NULL CHECK (model_format IN ('onnx', 'relay')),
    model_sha256  CHAR(64)    NOT NULL REFERENCES blobs (sha256),
    target        TEXT        NOT NULL,
    opt_level     INT         NOT NULL CHECK (opt_level BETWEEN 1 AND 3),
    shapes        TEXT        NOT NULL DEFAULT '',       -- "x=1x3x224x224,y=1x10" as submitted
    error_stage   TEXT,
    error_message TEXT,
    trace_id      TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at   TIMESTAMPTZ
);
CREATE INDEX jobs_status_created ON jobs (status, created_at DESC);
CREATE INDEX jobs_created ON jobs (created_at DESC);

-- Append-only history of a job: what the events endpoint streams.
CREATE TABLE job_events (
    id          BIGSERIAL PRIMARY KEY,
    job_id      UUID        NOT NULL REFERENCES jobs (id),
    stage       TEXT,                                      -- null for gateway events (submitted, cancelled)
    kind        TEXT        NOT NULL CHECK (kind IN ('QUEUED', 'STARTED', 'FINISHED', 'RETRY', 'FAILED',
                                                     'SUCCEEDED', 'CANCELLED')),
    status      TEXT        NOT NULL,                      -- the job's status after this event
    message     TEXT,
    duration_ms BIGINT,
    at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX job_events_job ON job_events (job_id, id);

-- Idempotency: one row per (job, stage) once the stage has produced its result. A redelivered message
-- finds the row and re-sends the stored result instead of doing the work again.
CREATE TABLE stage_results (
    job_id      UUID        NOT NULL REFERENCES jobs (id),
    stage       TEXT        NOT NULL,
    output      JSONB       NOT NULL,                      -- the envelope the stage produced
    attempts    INT         NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    duration_ms BIGINT      NOT NULL,
    PRIMARY KEY (job_id, stage)
);

CREATE TABLE artifacts (
    id           BIGSERIAL PRIMARY KEY,
    job_id       UUID        NOT NULL UNIQUE REFERENCES jobs (id),  -- exactly one artifact per job
    content_hash TEXT        NOT NULL,                  -- the artifact's own hash (manifest.json)
    tar_sha256   CHAR(64)    NOT NULL REFERENCES blobs (sha256),    -- the .tar.gz the gateway serves
    size_bytes   BIGINT      NOT NULL,
    manifest     JSONB       NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The tuning farm (ARCHITECTURE.md section 5). The autotuner stage reads schedules; tuner workers and
-- hardware agents will fill devices, tuning_tasks and tuning_records.
CREATE TABLE devices (
    id             TEXT PRIMARY KEY,                    -- agent-chosen, stable per host+device
    device_class   TEXT        NOT NULL,                -- e.g. "cpu-x86_64-avx2", "gpu-sm90"
    host           TEXT        NOT NULL,
    capabilities   JSONB       NOT NULL DEFAULT '{}',
    status         TEXT        NOT NULL DEFAULT 'ONLINE' CHECK (status IN ('ONLINE', 'DRAINING', 'OFFLINE')),
    registered_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_heartbeat TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE tuning_tasks (
    id           BIGSERIAL PRIMARY KEY,
    job_id       UUID REFERENCES jobs (id),
    workload_key TEXT        NOT NULL,
    template     TEXT        NOT NULL,
    target       TEXT        NOT NULL,
    device_class TEXT        NOT NULL,
    strategy     TEXT        NOT NULL DEFAULT 'random',
    trials       INT         NOT NULL DEFAULT 0,
    status       TEXT        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One row per measurement of one config on one device.
CREATE TABLE tuning_records (
    id           BIGSERIAL PRIMARY KEY,
    task_id      BIGINT REFERENCES tuning_tasks (id),
    workload_key TEXT        NOT NULL,
    target       TEXT        NOT NULL,
    device_id    TEXT REFERENCES devices (id),
    config       JSONB       NOT NULL,
    cost_us      DOUBLE PRECISION,                      -- median latency; null when error is set
    error        TEXT CHECK (error IN ('COMPILE_ERROR', 'RUNTIME_ERROR', 'WRONG_ANSWER', 'TIMEOUT')),
    error_detail TEXT,
    measured_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX tuning_records_workload ON tuning_records (workload_key, target, cost_us);

-- The chosen config per (workload, target), with its review state; codegen applies approved or pinned ones.
CREATE TABLE schedules (
    id           BIGSERIAL PRIMARY KEY,
    workload_key TEXT        NOT NULL,
    target       TEXT        NOT NULL,
    template     TEXT        NOT NULL,
    config       JSONB       NOT NULL,
    cost_us      DOUBLE PRECISION,
    default_cost_us DOUBLE PRECISION,                   -- the template default on the same device
    record_id    BIGINT REFERENCES tuning_records (id),
    status       TEXT        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'PINNED')),
    reviewer     TEXT,
    note         TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (workload_key, target)
);
