package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;

/**
 * Turns the generic keyword attributes of a call into the operator's typed record, filling
 * defaults; throws {@link dev.relayfarm.ops.RelationException} for unknown keys or wrong value
 * kinds, naming the key (use {@link AttrReader}).
 */
@FunctionalInterface
public interface AttrsParser<A> {
    A parse(Attrs attrs);
}
