package dev.relayfarm.kernel;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.FloatImm;

final class PrimExprsTestHelper {
    private PrimExprsTestHelper() {}

    static FloatImm f32(double v) {
        return new FloatImm(v, DType.FLOAT32);
    }
}
