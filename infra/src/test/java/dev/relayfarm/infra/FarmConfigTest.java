package dev.relayfarm.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local farm's defaults: loopback only, and a generated token that survives restarts. */
class FarmConfigTest {
    @TempDir
    Path work;

    @Test
    void aGeneratedTokenIsKeptInTheWorkFolderAndReusedAndTheGatewayListensOnLoopback() throws Exception {
        Assumptions.assumeTrue(System.getenv("RELAYFARM_TOKEN") == null || System.getenv("RELAYFARM_TOKEN").isBlank(), "RELAYFARM_TOKEN is set: it wins");
        FarmConfig first = FarmConfig.defaults(work);
        assertTrue(first.tokenGenerated());
        assertEquals("127.0.0.1", first.bindAddress());
        assertNotEquals(first.token(), FarmConfig.defaults(work).token(), "nothing kept yet: each call makes one up");
        LocalFarm.writeToken(work.resolve("token"), first.token()); // what LocalFarm.start writes
        assertEquals(first.token(), FarmConfig.defaults(work).token());
        assertEquals("0.0.0.0", first.withBindAddress("0.0.0.0").withFreePorts().bindAddress());
    }

    @Test
    void theTokenFileIsOwnerOnlyAndReplacesAnOlderOneReadableByOthers() throws Exception {
        Path file = work.resolve("token");
        Files.writeString(file, "old\n");
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("not a POSIX file system");
        }
        LocalFarm.writeToken(file, "rf_new");
        assertEquals("rf_new\n", Files.readString(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        try (var left = Files.list(work)) {
            assertEquals(1, left.count(), "no temporary file left behind");
        }
    }
}
