package dev.relayfarm.gen;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.serde.BlobSink;
import dev.relayfarm.serde.BlobSource;
import dev.relayfarm.serde.InMemoryBlobStore;
import dev.relayfarm.serde.IrJson;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Optional;
import java.util.function.IntFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The 100,000-node chains through the JSON form, both ways, on the default stack. */
class LargeProgramsJsonTest {
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.relayfarm.gen.LargeProgramsTest#chains")
    void inlineJsonRoundTrips(String name, IntFunction<IRModule> build) {
        IRModule m = build.apply(LargeProgramsTest.N);
        String json = IrJson.write(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
        IRModule back = IrJson.read(json, BlobSource.NONE);
        assertEquals(Optional.empty(), StructuralEquality.diff(m, back));
        assertEquals(StructuralHash.hash(m), StructuralHash.hash(back));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.relayfarm.gen.LargeProgramsTest#chains")
    void streamedJsonWithABlobStoreRoundTrips(String name, IntFunction<IRModule> build) {
        IRModule m = build.apply(LargeProgramsTest.N);
        InMemoryBlobStore store = new InMemoryBlobStore();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        IrJson.write(m, store, IrJson.Options.DEFAULT.withInlineLimit(0), out);
        // The chains use a handful of distinct scalar values; the store keeps each content once.
        assertEquals(name.startsWith("let") ? 5 : 7, store.size(), store.keys().toString());
        IRModule back = IrJson.read(new ByteArrayInputStream(out.toByteArray()), store);
        assertEquals(Optional.empty(), StructuralEquality.diff(m, back));
        assertEquals(StructuralHash.hash(m), StructuralHash.hash(back));
    }
}
