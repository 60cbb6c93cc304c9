package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** Relation checks written as text: operator, attributes, input types in, output type or error out. */
final class RelationAssert {
    private RelationAssert() {}

    private static Optional<Type> run(String op, String attrs, String... inputs) {
        List<Type> types = Arrays.stream(inputs).map(OpTestText::type).toList();
        return OpRegistry.get(op).inferOutput(types, OpTestText.attrs(attrs));
    }

    static void infers(String op, String attrs, String expected, String... inputs) {
        Optional<Type> out = run(op, attrs, inputs);
        assertTrue(out.isPresent(), op + "(" + String.join(", ", inputs) + ") deferred");
        assertEquals(expected, TypeFormat.format(out.get()), op + "(" + String.join(", ", inputs) + ", " + attrs + ")");
    }

    static void rejects(String op, String attrs, String message, String... inputs) {
        RelationException e = assertThrows(RelationException.class, () -> run(op, attrs, inputs),
                op + "(" + String.join(", ", inputs) + ", " + attrs + ") should be rejected");
        assertEquals(message, e.getMessage());
    }

    static void defers(String op, String attrs, String... inputs) {
        assertTrue(run(op, attrs, inputs).isEmpty(), op + " should defer on " + String.join(", ", inputs));
    }
}
