package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import org.junit.jupiter.api.Test;

/**
 * 100,000-deep programs round-trip on the default thread stack: neither the writer nor the reader may
 * recurse per expression node. (The surefire JVM runs without an -Xss raise on purpose.)
 */
class IrJsonDeepTest {
    static final int N = 100_000;

    private static void roundTrip(IRModule m, int minNodes) {
        long t0 = System.nanoTime();
        String json = IrJson.toJson(m);
        long t1 = System.nanoTime();
        IRModule back = IrJson.fromJson(json);
        long t2 = System.nanoTime();
        var d = StructuralEquality.diff(m, back);
        assertTrue(d.isEmpty(), () -> d.get().message());
        JsonNode doc = IrJson.parse(json);
        assertTrue(doc.get("nodes").size() >= minNodes, "nodes: " + doc.get("nodes").size());
        System.out.printf("serde deep: %d nodes, %d KiB, write %d ms, read %d ms%n", doc.get("nodes").size(), json.length() / 1024,
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
    }

    @Test
    void letChainOf100kRoundTrips() {
        roundTrip(SerdeFixtures.letChain(N), 2 * N);
    }

    @Test
    void callChainOf100kRoundTrips() {
        roundTrip(SerdeFixtures.callChain(N), N);
    }

    @Test
    void deepChainRoundTripsThroughStreamsAndABlobStore() {
        IRModule m = SerdeFixtures.callChain(N);
        InMemoryBlobStore store = new InMemoryBlobStore();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        IrJson.write(m, store, IrJson.Options.DEFAULT.withPretty(true), out);
        IRModule back = IrJson.read(new java.io.ByteArrayInputStream(out.toByteArray()), store);
        var d = StructuralEquality.diff(m, back);
        assertTrue(d.isEmpty(), () -> d.get().message());
    }
}
