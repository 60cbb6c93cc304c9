package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which registered Relay operators have a compute definition. Prints the ones without, and keeps the
 * covered count from dropping below the recorded floor (raise {@link #FLOOR} when adding rules).
 */
class OpComputesCoverageTest {
    /** Covered operators when this floor was last raised. */
    private static final int FLOOR = 137;

    @Test
    void coverageNeverDrops() {
        List<String> missing = new ArrayList<>();
        int covered = 0;
        for (OpDef<?> def : OpRegistry.all()) {
            if (OpComputes.supports(def.name())) covered++;
            else missing.add(def.name());
        }
        System.out.println("OpComputes: " + covered + " of " + OpRegistry.all().size() + " operators covered; without a compute: " + missing);
        assertTrue(covered >= FLOOR, "covered " + covered + " < floor " + FLOOR + "; missing: " + missing);
        // every rule names a registered operator (Rules.add checks this when the registry is built)
        assertTrue(OpComputes.supportedOps().stream().allMatch(op -> OpRegistry.find(op).isPresent()));
    }
}
