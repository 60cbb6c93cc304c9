package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConformanceCommandTest {
    @Test
    void aMissingFolderIsAnErrorNamingIt(@TempDir Path dir) {
        CliRun r = CliRun.relayc("conformance", dir.resolve("nope").toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("nope") && r.err().contains("not a directory"), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
        CliRun level = CliRun.relayc("conformance", "-O", "7", dir.toString());
        assertEquals(2, level.exitCode());
        assertTrue(level.err().contains("-O must be 0..3, got 7"), level.err());
    }
}
