package dev.relayfarm.passes;

/**
 * A range of {@code -O} levels. Two ranges exist, each defined here once: {@link #PIPELINE}, what the pass pipeline
 * (and so {@code Stages.optimize}, {@code relayc opt}) accepts, and {@link #FUSED}, the levels at which every operator
 * call ends up in a fused Primitive function, which is what a compile to an artifact needs (the graph executor runs
 * fused kernels only).
 */
public record OptLevels(int min, int max) {
    /** The lowest and highest levels and the first that fuses, as constants so help texts (annotations) can name them. */
    public static final int LOWEST = 0, HIGHEST = 3, FIRST_FUSED = 1;
    /** Every level the pipeline has. */
    public static final OptLevels PIPELINE = new OptLevels(LOWEST, HIGHEST);
    /** From -O1, the level of {@link FuseOps}, to the highest level. */
    public static final OptLevels FUSED = new OptLevels(FIRST_FUSED, HIGHEST);
    /** {@link #PIPELINE} and {@link #FUSED} as {@link #toString} writes them, for annotations. */
    public static final String PIPELINE_TEXT = LOWEST + ".." + HIGHEST, FUSED_TEXT = FIRST_FUSED + ".." + HIGHEST;

    public boolean contains(int level) {
        return level >= min && level <= max;
    }

    /** {@code 0..3}, as messages and help texts write the range. */
    @Override
    public String toString() {
        return min + ".." + max;
    }
}
