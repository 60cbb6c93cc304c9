package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class VtaConfigTest {
    @Test
    void defaultBuffersHoldVtasEntryCounts() {
        VtaConfig c = VtaConfig.defaults();
        assertEquals(1, c.batch());
        assertEquals(16, c.blockIn());
        assertEquals(16, c.blockOut());
        assertEquals(8192, c.entries(BufferKind.UOP));
        assertEquals(2048, c.entries(BufferKind.INP));
        assertEquals(1024, c.entries(BufferKind.WGT));
        assertEquals(2048, c.entries(BufferKind.ACC));
        assertEquals(16, c.entryBytes(BufferKind.INP));
        assertEquals(256, c.entryBytes(BufferKind.WGT));
        assertEquals(64, c.entryBytes(BufferKind.ACC));
        assertEquals(16, c.outputEntryBytes());
    }

    @Test
    void rejectsBuffersThatAreNotWholeEntries() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new VtaConfig(1, 16, 16, 32 * 1024, 100, 256 * 1024, 128 * 1024, 8, 0, 2));
        assertTrue(e.getMessage().contains("inputBufferBytes"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> VtaConfig.defaults().withDma(0, 0));
        assertThrows(IllegalArgumentException.class, () -> VtaConfig.defaults().withAluInitiationInterval(0));
    }
}
