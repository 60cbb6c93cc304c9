package dev.relayfarm.kernel.compute;

import dev.relayfarm.kernel.te.Compute;
import java.util.List;

/** The compute rule of one operator: one {@link Compute} per output tensor. */
@FunctionalInterface
interface OpCompute {
    List<Compute> apply(OpCall call);
}
