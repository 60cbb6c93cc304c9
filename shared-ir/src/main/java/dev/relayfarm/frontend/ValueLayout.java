package dev.relayfarm.frontend;

import java.util.List;

/**
 * The concrete structure of a graph input that is not a plain tensor: how long a sequence is and
 * what shape each element has, whether an optional holds a value. Sequences and optionals import as
 * Relay tuples whose length is static (see {@link SequenceConverters}), so the importer needs this for
 * every sequence or optional graph input; {@code relayc check} and the conformance harness take it
 * from the test data, the way they bind dynamic input shapes.
 *
 * <p>A graph input with a layout becomes one {@code @main} parameter per tensor it holds, in
 * depth-first order ({@link #tensorCount}), and the callers pass the tensors flattened that way.
 */
public sealed interface ValueLayout {
    /** A tensor of this shape. */
    record Tensor(List<Long> shape) implements ValueLayout {
        public Tensor {
            shape = List.copyOf(shape);
        }
    }

    /** A sequence of these elements (in order; any length, also 0). */
    record Sequence(List<ValueLayout> elements) implements ValueLayout {
        public Sequence {
            elements = List.copyOf(elements);
        }
    }

    /** An optional: {@code element} is what it holds, or null when it is empty. */
    record Optional(ValueLayout element) implements ValueLayout {
        public boolean isEmpty() {
            return element == null;
        }
    }

    /** How many tensors (and so {@code @main} parameters) the value holds. */
    default int tensorCount() {
        return switch (this) {
            case Tensor t -> 1;
            case Sequence s -> s.elements().stream().mapToInt(ValueLayout::tensorCount).sum();
            case Optional o -> o.isEmpty() ? 0 : o.element().tensorCount();
        };
    }
}
