package dev.relayfarm.services.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.services.FarmTestInfra;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.store.JobStatus;
import java.util.Optional;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/** The job lifecycle as {@link JobStore} enforces it, on the real (embedded) PostgreSQL with the farm's migrations. */
class JobStoreTest {
    private static JdbcTemplate jdbc;
    private static JobStore jobs;

    @BeforeAll
    static void database() {
        var db = new DriverManagerDataSource(FarmTestInfra.jdbcUrl(), "postgres", "postgres");
        Flyway.configure().dataSource(db).locations("classpath:db/migration").load().migrate();
        jdbc = new JdbcTemplate(db);
        jobs = new JobStore(jdbc, Envelopes.MAPPER);
    }

    private static UUID queued() {
        UUID id = UUID.randomUUID();
        jobs.create(new NewJob(id, "m.relay", "relay", "a".repeat(64), "c", 3, "", null, null, 10));
        return id;
    }

    private static UUID succeeded() {
        UUID id = queued();
        assertTrue(jobs.advance(id, JobStatus.GENERATING));
        assertTrue(jobs.succeed(id));
        return id;
    }

    private static JobStatus status(UUID id) {
        return jobs.status(id).orElseThrow();
    }

    @Test
    void aJobWalksThePipelineToSucceeded() {
        UUID id = queued();
        JobRow created = jobs.find(id).orElseThrow();
        assertEquals(JobStatus.QUEUED, created.status());
        assertEquals(10, created.modelSizeBytes());
        for (JobStatus s : new JobStatus[] {JobStatus.IMPORTING, JobStatus.IMPORTING, JobStatus.TYPING, JobStatus.OPTIMIZING, JobStatus.TUNING,
                JobStatus.GENERATING}) {
            assertTrue(jobs.advance(id, s), "to " + s + " (IMPORTING twice: a redelivered message starts its stage again)");
            assertEquals(s, status(id));
            assertNull(jobs.find(id).orElseThrow().finishedAt());
        }
        assertTrue(jobs.succeed(id));
        JobRow done = jobs.find(id).orElseThrow();
        assertEquals(JobStatus.SUCCEEDED, done.status());
        assertNotNull(done.finishedAt());
    }

    @Test
    void nothingLeavesATerminalStatus() {
        UUID ok = succeeded();
        assertFalse(jobs.advance(ok, JobStatus.IMPORTING), "SUCCEEDED -> IMPORTING");
        assertFalse(jobs.fail(ok, "codegen", "late failure", null), "SUCCEEDED -> FAILED");
        assertEquals(Optional.of(new JobStore.Cancel(JobStatus.SUCCEEDED, false)), jobs.cancel(ok));
        JobRow row = jobs.find(ok).orElseThrow();
        assertEquals(JobStatus.SUCCEEDED, row.status());
        assertNull(row.errorMessage());

        UUID failed = queued();
        assertTrue(jobs.fail(failed, "import", "broken", "onnx-malformed"));
        assertFalse(jobs.advance(failed, JobStatus.TYPING), "FAILED -> TYPING");
        assertFalse(jobs.succeed(failed), "FAILED -> SUCCEEDED");
        assertFalse(jobs.fail(failed, "infer", "second failure", null), "the first failure stands");
        assertEquals("import", jobs.find(failed).orElseThrow().errorStage());
        assertEquals("onnx-malformed", jobs.find(failed).orElseThrow().errorCode(), "the first failure's code stands too");

        UUID cancelled = queued();
        assertEquals(Optional.of(new JobStore.Cancel(JobStatus.QUEUED, true)), jobs.cancel(cancelled));
        assertFalse(jobs.advance(cancelled, JobStatus.IMPORTING), "CANCELLED -> IMPORTING");
        assertFalse(jobs.failQueued(cancelled, "gateway", "not sent"), "CANCELLED -> FAILED");
        assertEquals(JobStatus.CANCELLED, status(cancelled));
    }

    @Test
    void anIllegalMoveOutOfARunningStatusIsRefusedAndWritesNothing() {
        UUID typing = queued();
        jobs.advance(typing, JobStatus.TYPING);
        var updated = jdbc.queryForObject("SELECT updated_at FROM jobs WHERE id = ?", java.sql.Timestamp.class, typing);
        var back = assertThrows(IllegalJobTransition.class, () -> jobs.advance(typing, JobStatus.IMPORTING));
        assertTrue(back.getMessage().contains("TYPING -> IMPORTING"), back.getMessage());
        var early = assertThrows(IllegalJobTransition.class, () -> jobs.succeed(typing));
        assertTrue(early.getMessage().contains("TYPING -> SUCCEEDED"), early.getMessage());
        assertEquals(JobStatus.TYPING, status(typing));
        assertEquals(updated, jdbc.queryForObject("SELECT updated_at FROM jobs WHERE id = ?", java.sql.Timestamp.class, typing));
        assertThrows(IllegalArgumentException.class, () -> jobs.advance(typing, JobStatus.QUEUED), "QUEUED is no stage's status");
    }

    @Test
    void theGatewayFailsAJobOnlyWhileItIsQueued() {
        UUID picked = queued();
        jobs.advance(picked, JobStatus.IMPORTING);
        assertFalse(jobs.failQueued(picked, "gateway", "compile.requested not sent"));
        assertEquals(JobStatus.IMPORTING, status(picked));

        UUID waiting = queued();
        assertTrue(jobs.failQueued(waiting, "gateway", "compile.requested not sent"));
        JobRow row = jobs.find(waiting).orElseThrow();
        assertEquals(JobStatus.FAILED, row.status());
        assertEquals("gateway", row.errorStage());
        assertNotNull(row.finishedAt());
    }

    @Test
    void theLegalMoves() {
        for (JobStatus to : JobStatus.values()) {
            for (JobStatus terminal : new JobStatus[] {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}) {
                assertFalse(terminal.canMoveTo(to), terminal + " -> " + to);
            }
            assertFalse(to.canMoveTo(JobStatus.QUEUED), to + " -> QUEUED");
        }
        assertTrue(JobStatus.QUEUED.canMoveTo(JobStatus.IMPORTING));
        assertTrue(JobStatus.TUNING.canMoveTo(JobStatus.TUNING), "a stage started again");
        assertTrue(JobStatus.TUNING.canMoveTo(JobStatus.GENERATING));
        assertFalse(JobStatus.TUNING.canMoveTo(JobStatus.TYPING), "backwards");
        assertFalse(JobStatus.TUNING.canMoveTo(JobStatus.SUCCEEDED), "only codegen's artifact makes a job succeed");
        assertTrue(JobStatus.GENERATING.canMoveTo(JobStatus.SUCCEEDED));
        assertTrue(JobStatus.QUEUED.canMoveTo(JobStatus.FAILED));
        assertTrue(JobStatus.OPTIMIZING.canMoveTo(JobStatus.CANCELLED));
    }
}
