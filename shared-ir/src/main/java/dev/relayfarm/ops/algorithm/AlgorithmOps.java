package dev.relayfarm.ops.algorithm;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/**
 * Operators that scan, sort or contract whole axes (TVM's algorithm/scan/einsum operators):
 * {@code cumsum}, {@code cumprod}, {@code topk}, {@code einsum}, {@code det}, {@code argwhere}, {@code unique}. Each lives in
 * {@code dev.relayfarm.ops.algorithm}; this list is the family's single registration point (and
 * what the kernel-coverage test walks).
 */
public final class AlgorithmOps {
    private AlgorithmOps() {}

    public static List<OpDef<?>> defs() {
        return List.of(Scan.CUMSUM, Scan.CUMPROD, TopK.DEF, Einsum.DEF, Det.DEF, ArgWhere.DEF, Unique.DEF);
    }

}
