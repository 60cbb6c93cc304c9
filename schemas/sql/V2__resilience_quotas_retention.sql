-- Issue 13 ("no input can stop the farm"): poison messages counted across restarts, consumer health, the gateway's
-- bounded re-sends, per-token quotas and the retention of finished jobs' bytes.

-- How often each stage started its handler for a job. Incremented (and committed) before the handler runs, so an
-- attempt that kills its thread or its process still counts: after relayfarm.stage.max-attempts the next delivery
-- goes to the DLQ instead of running again (a restart must never re-read the same poison forever).
CREATE TABLE stage_attempts (
    job_id     UUID        NOT NULL REFERENCES jobs (id),
    stage      TEXT        NOT NULL,
    attempts   INT         NOT NULL,
    last_error TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, stage)
);

-- One row per consumer thread of every stage process, refreshed by its watchdog: what the gateway's health reads
-- (a gateway cannot see other processes' threads).
CREATE TABLE stage_consumers (
    id            TEXT PRIMARY KEY,                     -- process instance + stage + thread index
    stage         TEXT        NOT NULL,
    alive         BOOLEAN     NOT NULL,
    restarts      INT         NOT NULL,
    busy_job      UUID,
    last_error    TEXT,
    last_error_at TIMESTAMPTZ,
    heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

ALTER TABLE jobs
    ADD COLUMN resend_count     INT NOT NULL DEFAULT 0, -- compile.requested copies the gateway re-sent (not the first)
    ADD COLUMN last_sent_at     TIMESTAMPTZ,            -- the last re-send; null: only the submit's send
    ADD COLUMN token_id         TEXT,                   -- sha256 of the bearer token that submitted it (quotas)
    ADD COLUMN model_size_bytes BIGINT,                 -- the upload's size, kept when retention deletes the blob
    ADD COLUMN expired_at       TIMESTAMPTZ;            -- retention deleted the job's blobs and artifact
UPDATE jobs j SET model_size_bytes = b.size_bytes FROM blobs b WHERE b.sha256 = j.model_sha256;
CREATE INDEX jobs_token_status ON jobs (token_id, status);
CREATE INDEX jobs_finished_unexpired ON jobs (finished_at) WHERE expired_at IS NULL;

-- Retention deletes blobs; the rows that named them stay (the hash remains a record of what was there).
ALTER TABLE jobs DROP CONSTRAINT jobs_model_sha256_fkey;
ALTER TABLE artifacts DROP CONSTRAINT artifacts_tar_sha256_fkey;
ALTER TABLE artifacts ADD COLUMN expired_at TIMESTAMPTZ;

-- A put of bytes already stored refreshes touched_at: retention never deletes a blob a running stage has just
-- written or re-used but not yet recorded in job_blobs.
ALTER TABLE blobs ADD COLUMN touched_at TIMESTAMPTZ NOT NULL DEFAULT now();

-- Which blobs each job uses (model, IR documents, their tensors, the artifact): retention deletes an expired job's
-- blobs unless a job that is not expired uses them too (blobs are content-addressed and shared).
CREATE TABLE job_blobs (
    job_id UUID     NOT NULL REFERENCES jobs (id),
    sha256 CHAR(64) NOT NULL,
    PRIMARY KEY (job_id, sha256)
);
CREATE INDEX job_blobs_sha256 ON job_blobs (sha256);
INSERT INTO job_blobs SELECT id, model_sha256 FROM jobs ON CONFLICT DO NOTHING;
INSERT INTO job_blobs SELECT job_id, tar_sha256 FROM artifacts ON CONFLICT DO NOTHING;
INSERT INTO job_blobs SELECT job_id, output ->> 'irRef' FROM stage_results WHERE output ->> 'irRef' IS NOT NULL ON CONFLICT DO NOTHING;
