package dev.relayfarm.tuning;

/** Why a candidate has no cost: each is recorded, and the tuner carries on with the next candidate. */
public enum MeasureError {
    /** The lowered kernel could not be built (lowering refused the config, or the C compiler failed or timed out). */
    COMPILE_ERROR,
    /** The candidate's process crashed, was killed for memory, or exited with an error. */
    RUNTIME_ERROR,
    /** It ran, but its outputs differ from the reference's on the same seeded inputs. */
    WRONG_ANSWER,
    /** It ran past the wall-clock limit and was killed with its process group. */
    TIMEOUT
}
