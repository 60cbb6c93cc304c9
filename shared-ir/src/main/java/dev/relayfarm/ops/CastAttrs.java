package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ops.RelationException;

/** {@code cast(x, dtype="float16")}: the target dtype is required. */
public record CastAttrs(DType dtype) {
    public static CastAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("cast", attrs);
        DType t = r.dtype("dtype", null);
        if (t == null) throw new RelationException("cast: attribute 'dtype' is required");
        r.finish();
        return new CastAttrs(t);
    }
}
