package dev.relayfarm.services.gateway;

import dev.relayfarm.serde.Sha256;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The database writes the stage services make (issue 6's job-state rules), done directly so gateway tests can put a
 * job in any state without running the pipeline.
 */
final class Stages {
    private Stages() {}

    static void started(JdbcTemplate jdbc, UUID job, String stage, String status) {
        jdbc.update("UPDATE jobs SET status = ?, updated_at = now() WHERE id = ?", status, job);
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status) VALUES (?, ?, 'STARTED', ?)", job, stage, status);
    }

    static void retry(JdbcTemplate jdbc, UUID job, String stage, String status) {
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status, message) VALUES (?, ?, 'RETRY', ?, 'transient')", job, stage, status);
    }

    static void finished(JdbcTemplate jdbc, UUID job, String stage, String status, long ms, int attempts) {
        jdbc.update("""
                INSERT INTO stage_results (job_id, stage, output, attempts, started_at, duration_ms)
                VALUES (?, ?, '{}'::jsonb, ?, now() - (? * interval '1 millisecond'), ?)""", job, stage, attempts, ms, ms);
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status, duration_ms) VALUES (?, ?, 'FINISHED', ?, ?)", job, stage, status, ms);
    }

    static void fail(JdbcTemplate jdbc, UUID job, String stage, String message) {
        jdbc.update("UPDATE jobs SET status = 'FAILED', error_stage = ?, error_message = ?, updated_at = now(), finished_at = now() WHERE id = ?",
                stage, message, job);
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status, message) VALUES (?, ?, 'FAILED', 'FAILED', ?)", job, stage, message);
    }

    static void succeed(JdbcTemplate jdbc, UUID job, byte[] tar, String contentHash) {
        String sha = Sha256.hex(tar);
        jdbc.update("INSERT INTO blobs (sha256, size_bytes, bytes) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", sha, (long) tar.length, tar);
        jdbc.update("INSERT INTO artifacts (job_id, content_hash, tar_sha256, size_bytes, manifest) VALUES (?, ?, ?, ?, '{}'::jsonb)",
                job, contentHash, sha, (long) tar.length);
        jdbc.update("UPDATE jobs SET status = 'SUCCEEDED', updated_at = now(), finished_at = now() WHERE id = ?", job);
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status) VALUES (?, 'codegen', 'SUCCEEDED', 'SUCCEEDED')", job);
    }
}
