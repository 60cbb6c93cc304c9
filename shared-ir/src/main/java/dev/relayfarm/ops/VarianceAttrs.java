package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import java.util.List;

/** Relay's VarianceAttrs, for variance and std: {@link ReduceAttrs} plus {@code unbiased} (divide by N − 1 instead of N). */
public record VarianceAttrs(List<Integer> axis, boolean keepdims, boolean exclude, boolean unbiased) implements ReductionAxes {
    public static VarianceAttrs parse(String op, Attrs attrs) {
        AttrReader r = new AttrReader(op, attrs);
        VarianceAttrs a = new VarianceAttrs(ReductionAxes.readAxis(r), r.bool("keepdims", false), r.bool("exclude", false),
                r.bool("unbiased", false));
        r.finish();
        return a;
    }
}
