package dev.relayfarm.kernel.schedule;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;

/**
 * One schedule primitive: plain data naming a stage (the tensor's name) and axes (by name), so a
 * schedule can be stored, sent and replayed; lowering applies the primitives in order and rejects an
 * invalid one with a {@link ScheduleException}. Axis names produced by primitives are fixed:
 * {@code split(x)} makes {@code x_o, x_i}; {@code fuse(a, b)} makes {@code a_b_f};
 * {@code cache_write(C)} makes the stage {@code C_local} with the same axis names.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Primitive.Split.class, name = "split"),
        @JsonSubTypes.Type(value = Primitive.Reorder.class, name = "reorder"),
        @JsonSubTypes.Type(value = Primitive.Fuse.class, name = "fuse"),
        @JsonSubTypes.Type(value = Primitive.Tile.class, name = "tile"),
        @JsonSubTypes.Type(value = Primitive.Vectorize.class, name = "vectorize"),
        @JsonSubTypes.Type(value = Primitive.Unroll.class, name = "unroll"),
        @JsonSubTypes.Type(value = Primitive.Parallel.class, name = "parallel"),
        @JsonSubTypes.Type(value = Primitive.ComputeInline.class, name = "compute_inline"),
        @JsonSubTypes.Type(value = Primitive.ComputeAt.class, name = "compute_at"),
        @JsonSubTypes.Type(value = Primitive.CacheWrite.class, name = "cache_write"),
})
public sealed interface Primitive {
    /** The stage (tensor name) the primitive applies to. */
    String stage();

    /** {@code axis -> axis_o * factor + axis_i}; a factor that does not divide the extent adds a guard. */
    record Split(String stage, String axis, int factor) implements Primitive {}

    /** Puts the named leaf axes in this order, in the positions they occupy now. */
    record Reorder(String stage, List<String> order) implements Primitive {
        public Reorder {
            order = List.copyOf(order);
        }
    }

    /** Merges two adjacent leaf axes (outer immediately before inner) into {@code outer_inner_f}. */
    record Fuse(String stage, String outer, String inner) implements Primitive {}

    /** split(x, xFactor), split(y, yFactor), reorder(x_o, y_o, x_i, y_i). */
    record Tile(String stage, String x, String y, int xFactor, int yFactor) implements Primitive {}

    /** Runs the innermost, data-parallel axis as SIMD lanes. */
    record Vectorize(String stage, String axis) implements Primitive {}

    /** Asks the C compiler to unroll the axis fully. */
    record Unroll(String stage, String axis) implements Primitive {}

    /** Splits a data-parallel axis across threads (the generated code's thread pool, codegen.ParallelRuntime). */
    record Parallel(String stage, String axis) implements Primitive {}

    /** Substitutes the stage's element formula into its consumers; the stage gets no buffer or loop. */
    record ComputeInline(String stage) implements Primitive {}

    /** Computes the region of the stage that one iteration of {@code consumer}'s {@code axis} reads, inside that loop. */
    record ComputeAt(String stage, String consumer, String axis) implements Primitive {}

    /**
     * Computes the stage into a new stage {@code <stage>_local} (a local tile once it is computed at an
     * axis of the stage) and turns the stage into a copy of it: the local accumulation of a reduction.
     * Must come before other primitives on the stage.
     */
    record CacheWrite(String stage) implements Primitive {}
}
