package dev.relayfarm.services.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class ModelsPageTest {
    @Test
    void aKernelNobodyMeasuredHasNoTimePerRunInsteadOfFailingThePage() {
        assertEquals(30.0, ModelsPage.perRunUs(3, 10.0, 12.0));
        assertEquals(36.0, ModelsPage.perRunUs(3, null, 12.0));
        // a layout transform between blocked convolutions: no record, no default (the dashboard's models page threw here)
        assertNull(ModelsPage.perRunUs(2, null, null));
    }
}
