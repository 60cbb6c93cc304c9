package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/** The {@code artifacts} table: exactly one artifact per job (the tarball itself is a blob). */
@Component
public class ArtifactStore {
    private final JdbcTemplate jdbc;
    private final ObjectMapper json;

    public ArtifactStore(JdbcTemplate jdbc, ObjectMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    /** A job's artifact. */
    public record ArtifactRow(long id, UUID jobId, String contentHash, String tarSha256, long sizeBytes, JsonNode manifest) {}

    /**
     * Inserts the job's artifact unless it has one; returns the id of the row that stands (a second
     * codegen of the same job, e.g. after a redelivery, keeps the first).
     */
    public long insert(UUID jobId, String contentHash, String tarSha256, long sizeBytes, JsonNode manifest) {
        jdbc.update("INSERT INTO artifacts (job_id, content_hash, tar_sha256, size_bytes, manifest) VALUES (?, ?, ?, ?, ?::jsonb) ON CONFLICT (job_id) DO NOTHING",
                jobId, contentHash, tarSha256, sizeBytes, manifest.toString());
        return jdbc.queryForObject("SELECT id FROM artifacts WHERE job_id = ?", Long.class, jobId);
    }

    public Optional<ArtifactRow> forJob(UUID jobId) {
        return jdbc.query("SELECT id, job_id, content_hash, tar_sha256, size_bytes, manifest::text FROM artifacts WHERE job_id = ?", (rs, i) -> {
            try {
                return new ArtifactRow(rs.getLong(1), rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4), rs.getLong(5), json.readTree(rs.getString(6)));
            } catch (java.io.IOException e) {
                throw new IllegalStateException("artifacts.manifest is not JSON", e);
            }
        }, jobId).stream().findFirst();
    }

    public int countForJob(UUID jobId) {
        return jdbc.queryForObject("SELECT count(*) FROM artifacts WHERE job_id = ?", Integer.class, jobId);
    }
}
