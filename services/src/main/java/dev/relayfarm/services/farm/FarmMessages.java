package dev.relayfarm.services.farm;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * The JSON of the farm's messages ({@link TuningTaskMessage}, {@link MeasureRequest}, {@link MeasureResult}; their
 * schemas: {@code schemas/messages/tuning.tasks|measure.requests|measure.results.schema.json}). Records
 * are read and written by their components only: the library's records carry derived accessors ({@code inputs()},
 * {@code isFloat()}) that must not become fields. Unknown and missing fields are errors, as for the pipeline's
 * envelopes, so a worker and an agent of different versions fail loudly instead of misreading each other.
 */
public final class FarmMessages {
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .visibility(PropertyAccessor.ALL, JsonAutoDetect.Visibility.NONE)
            .visibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY)
            .visibility(PropertyAccessor.CREATOR, JsonAutoDetect.Visibility.ANY)
            .build();

    private FarmMessages() {}

    public static String write(Object message) {
        try {
            return MAPPER.writeValueAsString(message);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a farm message is plain data and always serializes: " + e.getOriginalMessage(), e);
        }
    }

    /** The message {@code json} holds; an {@link IllegalArgumentException} names what does not fit {@code type}. */
    public static <T> T read(String json, Class<T> type) {
        try {
            return MAPPER.readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a " + type.getSimpleName() + ": " + e.getOriginalMessage(), e);
        }
    }
}
