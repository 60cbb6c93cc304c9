package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.services.store.JobRow;

/**
 * What a stage handler gets: the message and the job's row. {@link #attempt} counts this stage's tries of
 * this message (1 first).
 */
public record StageInput(Envelope envelope, JobRow job, int attempt) {
    /** The job's options as the gateway sent them ({@code target}, {@code optLevel}, {@code shapes}). */
    public JsonNode options() {
        return required("options");
    }

    /** The model's description ({@code sha256}, {@code name}, {@code format}). */
    public JsonNode model() {
        return required("model");
    }

    /** A new payload that carries {@code model} and {@code options} forward (every stage's output does). */
    public ObjectNode forwardPayload() {
        ObjectNode p = Envelopes.MAPPER.createObjectNode();
        p.set("model", model().deepCopy());
        p.set("options", options().deepCopy());
        return p;
    }

    /** The input's IR (the previous stage's output), a blob key. */
    public String irRef() {
        String ref = envelope.irRef();
        if (ref == null) throw new IllegalArgumentException("message from " + envelope.stage() + " has no irRef");
        return ref;
    }

    private JsonNode required(String field) {
        JsonNode n = envelope.payload().get(field);
        if (n == null || !n.isObject()) throw new IllegalArgumentException("payload has no \"" + field + "\" object (from stage " + envelope.stage() + ")");
        return n;
    }
}
