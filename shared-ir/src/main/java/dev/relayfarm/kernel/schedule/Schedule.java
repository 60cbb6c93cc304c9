package dev.relayfarm.kernel.schedule;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An immutable, replayable list of primitives: exactly what a tuning record stores. The empty
 * schedule is the naive loop nest (every stage at the root, axes in definition order).
 */
public record Schedule(List<Primitive> primitives) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static final Schedule NAIVE = new Schedule(List.of());

    public Schedule {
        primitives = List.copyOf(primitives);
    }

    public static Schedule of(Primitive... primitives) {
        return new Schedule(Arrays.asList(primitives));
    }

    /** A new schedule with {@code more} appended. */
    public Schedule then(Primitive... more) {
        List<Primitive> all = new ArrayList<>(primitives);
        all.addAll(Arrays.asList(more));
        return new Schedule(all);
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("schedule is plain data and always serializes", e);
        }
    }

    public static Schedule fromJson(String json) {
        try {
            return JSON.readValue(json, Schedule.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a schedule: " + e.getOriginalMessage(), e);
        }
    }
}
