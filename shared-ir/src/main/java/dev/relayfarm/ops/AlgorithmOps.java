package dev.relayfarm.ops;

import dev.relayfarm.ops.algorithm.ArgWhere;
import dev.relayfarm.ops.algorithm.Det;
import dev.relayfarm.ops.algorithm.Einsum;
import dev.relayfarm.ops.algorithm.Scan;
import dev.relayfarm.ops.algorithm.TopK;
import dev.relayfarm.ops.algorithm.Unique;
import java.util.List;

/**
 * Operators that scan, sort or contract whole axes (TVM's algorithm/scan/einsum operators):
 * {@code cumsum}, {@code cumprod}, {@code topk}, {@code einsum}, {@code det}, {@code argwhere}, {@code unique}. Each lives in
 * {@code dev.relayfarm.ops.algorithm}; this list is the family's single registration point (and
 * what the kernel-coverage test walks).
 */
final class AlgorithmOps {
    private AlgorithmOps() {}

    static List<OpDef<?>> defs() {
        return List.of(Scan.CUMSUM, Scan.CUMPROD, TopK.DEF, Einsum.DEF, Det.DEF, ArgWhere.DEF, Unique.DEF);
    }

    static void register(OpRegistry.Builder r) {
        for (OpDef<?> def : defs()) r.add(def);
    }
}
