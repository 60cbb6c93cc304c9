package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.MiniFloats;
import dev.relayfarm.ops.RelationException;

/**
 * {@code cast(x, dtype="float16")}: the target dtype is required. For an 8-bit float target,
 * {@code saturate=True} clamps finite overflow and infinities to the largest finite value (ONNX
 * Cast's default; without it they become infinity or NaN, see {@link MiniFloats}); for
 * {@code float8_e8m0fnu}, {@code round_mode} ("up", the default, "down" or "nearest") picks the power
 * of two. Either attribute on another target is an error.
 */
public record CastAttrs(DType dtype, boolean saturate, MiniFloats.RoundMode roundMode) {
    public CastAttrs(DType dtype) {
        this(dtype, false, MiniFloats.RoundMode.UP);
    }

    public static CastAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("cast", attrs);
        DType t = r.dtype("dtype", null);
        if (t == null) throw new RelationException("cast: attribute 'dtype' is required");
        boolean saturate = r.bool("saturate", false);
        String mode = r.string("round_mode", "up");
        r.finish();
        if (saturate && !(t.isMiniFloat() && t.bits() == 8)) {
            throw new RelationException("cast: 'saturate' applies to 8-bit float targets only, not " + t);
        }
        MiniFloats.RoundMode m;
        try {
            m = MiniFloats.RoundMode.parse(mode);
        } catch (IllegalArgumentException e) {
            throw new RelationException("cast: " + e.getMessage());
        }
        if (m != MiniFloats.RoundMode.UP && t.code() != DType.Code.FLOAT8_E8M0FNU) {
            throw new RelationException("cast: 'round_mode' applies to float8_e8m0fnu targets only, not " + t);
        }
        return new CastAttrs(t, saturate, m);
    }
}
