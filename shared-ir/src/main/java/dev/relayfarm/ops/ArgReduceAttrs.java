package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import java.util.List;

/** Relay's ArgReduceAttrs, for argmax and argmin: {@link ReduceAttrs} plus {@code select_last_index} (ties go to the last index). */
public record ArgReduceAttrs(List<Integer> axis, boolean keepdims, boolean exclude, boolean selectLastIndex)
        implements ReductionAxes {
    public static ArgReduceAttrs parse(String op, Attrs attrs) {
        AttrReader r = new AttrReader(op, attrs);
        ArgReduceAttrs a = new ArgReduceAttrs(ReductionAxes.readAxis(r), r.bool("keepdims", false), r.bool("exclude", false),
                r.bool("select_last_index", false));
        r.finish();
        return a;
    }
}
