package dev.relayfarm.ops;

/**
 * How an operator fuses (TVM's OpPatternKind), ordered from most to least fusable: FuseOps groups
 * element-wise, broadcast and injective consumers into anchors, and leaves opaque ops alone.
 */
public enum OpPattern {
    /** Output element i depends only on input element i (relu, add of same shapes). */
    ELEMWISE,
    /** Like ELEMWISE with broadcasting along some axes (add with bias). */
    BROADCAST,
    /** Each output element is a function of some input elements, no reduction (reshape, transpose). */
    INJECTIVE,
    /** A commutative reduction (sum, max). */
    COMM_REDUCE,
    /** A complex op whose output can absorb element-wise consumers (conv2d, dense). */
    OUT_ELEMWISE_FUSABLE,
    /** Produces a tuple (split). */
    TUPLE,
    /** Not fusable (argsort, dynamic ops). */
    OPAQUE
}
