package dev.relayfarm.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.text.RelayParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** The shared seed programs ({@code src/test/resources/relay}) type-check with the real operators. */
class SeedProgramsTest {

    static IRModule load(String name) throws IOException {
        try (InputStream in = SeedProgramsTest.class.getResourceAsStream("/relay/" + name)) {
            if (in == null) throw new IOException("missing test resource relay/" + name);
            return RelayParser.parseModule(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
        }
    }

    static Stream<Arguments> signatures() {
        return Stream.of(
                Arguments.of("ackermann.relay", "ackermann", "fn (int32, int32) -> int32"),
                Arguments.of("ackermann.relay", "main", "fn () -> int32"),
                Arguments.of("closure.relay", "main", "fn (float32) -> float32"),
                Arguments.of("factorial.relay", "main", "fn (int32) -> int32"),
                Arguments.of("shadowing.relay", "main", "fn () -> int32"),
                Arguments.of("refs.relay", "main", "fn () -> int32"),
                Arguments.of("nat.relay", "add", "fn (Nat, Nat) -> Nat"),
                Arguments.of("nat.relay", "main", "fn () -> int32"),
                Arguments.of("list_map_fold.relay", "map", "fn [A, B](fn (A) -> B, List[A]) -> List[B]"),
                Arguments.of("list_map_fold.relay", "main", "fn () -> float32"),
                Arguments.of("match_partial.relay", "first_some", "fn [A]((Option[A], Option[A]), A) -> A"),
                Arguments.of("match_partial.relay", "main", "fn () -> int32"),
                Arguments.of("tuples.relay", "main", "fn ((Tensor[(2), float32], (int32, bool))) -> (int32,)"),
                Arguments.of("dataflow_shared.relay", "main",
                        "fn (Tensor[(4), float32], Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32], Tensor[(4), bool])"),
                Arguments.of("mlp.relay", "main", "fn (Tensor[(1, 784), float32], Tensor[(128, 784), float32], Tensor[(128), float32], "
                        + "Tensor[(10, 128), float32], Tensor[(10), float32]) -> Tensor[(1, 10), float32]"),
                Arguments.of("conv2d.relay", "main", "fn (Tensor[(1, 3, 32, 32), float32], Tensor[(16, 3, 3, 3), float32], "
                        + "Tensor[(16), float32], Tensor[(16), float32], Tensor[(16), float32], Tensor[(16), float32]) "
                        + "-> Tensor[(1, 16, 1, 1), float32]"));
    }

    @ParameterizedTest(name = "{0} @{1}")
    @MethodSource("signatures")
    void seedProgramTypeChecks(String file, String global, String expected) throws IOException {
        InferResult r = TypeInference.infer(load(file));
        assertEquals(expected, r.typeOf(new GlobalVar(global)).toString());
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        Ir.assertFullyTyped(r);
    }

    @Test
    void unusedHoleAnnotationIsUnderConstrained() throws IOException {
        // types.relay declares @higher(..., %i: _) and never uses %i.
        TypeException e = assertThrows(TypeException.class, () -> TypeInference.infer(load("types.relay")));
        assertEquals(1, e.errors().size(), e.getMessage());
        assertTrue(e.errors().get(0).toString().matches("types\\.relay:\\d+:\\d+: cannot infer the type of parameter %i of @higher.*"),
                e.getMessage());
    }
}
