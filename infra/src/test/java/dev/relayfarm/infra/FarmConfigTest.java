package dev.relayfarm.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
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
        Files.writeString(work.resolve("token"), first.token() + "\n"); // what LocalFarm.start writes
        assertEquals(first.token(), FarmConfig.defaults(work).token());
        assertEquals("0.0.0.0", first.withBindAddress("0.0.0.0").withFreePorts().bindAddress());
    }
}
