package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RelaycTest {

    @Test
    void helpExitsZeroAndMentionsRelayc() {
        CliRun r = CliRun.relayc("--help");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("relayc"), r.out());
    }

    @Test
    void versionIsPrinted() {
        CliRun r = CliRun.relayc("--version");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("0.1.0"), r.out());
    }

    @Test
    void noSubcommandIsAUsageError() {
        CliRun r = CliRun.relayc();
        assertNotEquals(0, r.exitCode());
        assertTrue(r.err().contains("Usage"), r.err());
    }
}
