package dev.relayfarm.services.gateway;

import dev.relayfarm.serde.Sha256;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import java.time.Instant;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The database writes the stage services make (issue 6's job-state rules), through the same stores, so gateway tests
 * can put a job in any state without running the pipeline.
 */
final class Stages {
    private Stages() {}

    private static JobStore jobs(JdbcTemplate jdbc) {
        return new JobStore(jdbc, Envelopes.MAPPER);
    }

    static void started(JdbcTemplate jdbc, UUID job, String stage, String status) {
        JobStore jobs = jobs(jdbc);
        jobs.advance(job, JobStatus.valueOf(status));
        jobs.event(job, stage, "STARTED", JobStatus.valueOf(status), null, null);
    }

    static void retry(JdbcTemplate jdbc, UUID job, String stage, String status) {
        jobs(jdbc).event(job, stage, "RETRY", JobStatus.valueOf(status), "transient", null);
    }

    static void finished(JdbcTemplate jdbc, UUID job, String stage, String status, long ms, int attempts) {
        JobStore jobs = jobs(jdbc);
        jobs.storeStageResult(job, stage, Envelopes.MAPPER.createObjectNode(), attempts, Instant.now().minusMillis(ms), ms);
        jobs.event(job, stage, "FINISHED", JobStatus.valueOf(status), null, ms);
    }

    static void fail(JdbcTemplate jdbc, UUID job, String stage, String message) {
        fail(jdbc, job, stage, message, null);
    }

    /** FAILED at {@code stage}; {@code code} is a user error's diagnostic code (null: an internal failure). */
    static void fail(JdbcTemplate jdbc, UUID job, String stage, String message, String code) {
        JobStore jobs = jobs(jdbc);
        jobs.fail(job, stage, message, code);
        jobs.event(job, stage, "FAILED", JobStatus.FAILED, message, null);
    }

    /** The artifact stored and the job SUCCEEDED, as codegen leaves it (the job passes through GENERATING, without its events). */
    static void succeed(JdbcTemplate jdbc, UUID job, byte[] tar, String contentHash) {
        artifact(jdbc, job, tar, contentHash);
        JobStore jobs = jobs(jdbc);
        jobs.advance(job, JobStatus.GENERATING);
        jobs.succeed(job);
        jobs.event(job, "codegen", "SUCCEEDED", JobStatus.SUCCEEDED, null, null);
    }

    /** The job's artifact: its archive as a blob and its artifacts row. */
    static void artifact(JdbcTemplate jdbc, UUID job, byte[] tar, String contentHash) {
        String sha = Sha256.hex(tar);
        jdbc.update("INSERT INTO blobs (sha256, size_bytes, bytes) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", sha, (long) tar.length, tar);
        jdbc.update("INSERT INTO artifacts (job_id, content_hash, tar_sha256, size_bytes, manifest) VALUES (?, ?, ?, ?, '{}'::jsonb)",
                job, contentHash, sha, (long) tar.length);
    }
}
