package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ops.RelationException;

/** {@code clip(x, a_min=..., a_max=...)}: both bounds are required, as in Relay's ClipAttrs. */
public record ClipAttrs(double aMin, double aMax) {
    public static ClipAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("clip", attrs);
        if (!r.has("a_min")) throw new RelationException("clip: attribute 'a_min' is required");
        if (!r.has("a_max")) throw new RelationException("clip: attribute 'a_max' is required");
        ClipAttrs a = new ClipAttrs(r.real("a_min", 0), r.real("a_max", 0));
        r.finish();
        return a;
    }
}
