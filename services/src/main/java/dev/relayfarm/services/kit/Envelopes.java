package dev.relayfarm.services.kit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * The envelope's JSON form (schema {@code schemas/messages/envelope.schema.json}): field names as in
 * {@link Envelope}, {@code producedAt} as an ISO-8601 instant, {@code irRef} null before import. Reading
 * rejects unknown fields and other schema versions, so a producer/consumer mismatch is a clear error
 * (and a dead letter) rather than a silently misread message.
 */
public final class Envelopes {
    /** The mapper for messages: also what the kit uses for payloads and events. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Envelopes() {}

    public static String write(Envelope e) {
        try {
            return MAPPER.writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("an envelope is plain data and always serializes", ex);
        }
    }

    /** Parses a message value; an {@link IllegalArgumentException} says what is wrong with it. */
    public static Envelope read(String json) {
        if (json == null) throw new IllegalArgumentException("empty message value (expected an envelope)");
        Envelope e;
        try {
            e = MAPPER.readValue(json, Envelope.class);
        } catch (JsonProcessingException ex) {
            throw new IllegalArgumentException("not an envelope: " + ex.getOriginalMessage(), ex);
        }
        if (e == null) throw new IllegalArgumentException("not an envelope: null");
        if (e.schemaVersion() != Envelope.SCHEMA_VERSION) {
            throw new IllegalArgumentException("envelope schemaVersion " + e.schemaVersion() + " is not supported (this service reads " + Envelope.SCHEMA_VERSION + ")");
        }
        return e;
    }
}
