package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.serde.Sha256;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The {@code job_blobs} table: which blobs each job uses (its model, the IR documents its stages produced, the tensor
 * blobs those documents name, its artifact archive). {@link RetentionSweeper} deletes an expired job's blobs only when
 * no other job that is not expired uses them. Recorded by the gateway (the model) and the service kit (every stage's
 * output, in the transaction that stores the stage result).
 */
@Component
public class BlobRefs {
    private final JdbcTemplate jdbc;
    private final PgBlobStore blobs;
    private final ObjectMapper json;

    public BlobRefs(JdbcTemplate jdbc, PgBlobStore blobs, ObjectMapper json) {
        this.jdbc = jdbc;
        this.blobs = blobs;
        this.json = json;
    }

    public void record(UUID jobId, Collection<String> sha256s) {
        for (String key : sha256s) {
            jdbc.update("INSERT INTO job_blobs (job_id, sha256) VALUES (?, ?) ON CONFLICT DO NOTHING", jobId, key);
        }
    }

    /**
     * Records an IR document and every blob it names. The document's format is the IR's JSON form; rather than
     * depend on where in it tensors refer to blobs, every string that is a SHA-256 key of a stored blob counts
     * (recording one too many only keeps a blob longer).
     */
    public void recordIr(UUID jobId, String irRef) {
        Set<String> keys = new LinkedHashSet<>();
        keys.add(irRef);
        if (blobs.contains(irRef)) {
            try {
                Deque<JsonNode> todo = new ArrayDeque<>();
                todo.push(json.readTree(blobs.get(irRef)));
                while (!todo.isEmpty()) {
                    JsonNode n = todo.pop();
                    if (n.isTextual() && Sha256.isKey(n.asText())) keys.add(n.asText());
                    else if (n.isContainerNode()) n.forEach(todo::push);
                }
            } catch (IOException e) {
                // not JSON: a stage's irRef is always an IR document; record the document alone
            }
        }
        // only keys of stored blobs (a weight's values may look like a key by chance); one statement however many
        // tensors the document names (a large model has hundreds)
        jdbc.update("""
                INSERT INTO job_blobs (job_id, sha256) SELECT ?, b.sha256 FROM blobs b WHERE b.sha256 = ANY (string_to_array(?, ',')::char(64)[])
                ON CONFLICT DO NOTHING""", jobId, String.join(",", keys));
    }
}
