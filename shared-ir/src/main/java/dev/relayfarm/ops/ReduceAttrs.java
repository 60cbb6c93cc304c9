package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import java.util.List;

/**
 * Relay's ReduceAttrs, for sum, mean, max, min, prod, all, any: {@code axis} (null = None = every
 * axis; as in Relay an empty list also means every axis), {@code keepdims} (reduced axes stay as
 * size 1), {@code exclude} (reduce every axis except those listed).
 */
public record ReduceAttrs(List<Integer> axis, boolean keepdims, boolean exclude) implements ReductionAxes {
    public static ReduceAttrs parse(String op, Attrs attrs) {
        AttrReader r = new AttrReader(op, attrs);
        ReduceAttrs a = new ReduceAttrs(ReductionAxes.readAxis(r), r.bool("keepdims", false), r.bool("exclude", false));
        r.finish();
        return a;
    }
}
