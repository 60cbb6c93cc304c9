package dev.relayfarm.kernel.lower;

import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/** The value of a Relay node inside a fused group: one tensor, or a tuple of values. */
sealed interface GroupValue {
    record One(Tensor tensor) implements GroupValue {}

    record Tuple(List<GroupValue> fields) implements GroupValue {
        public Tuple {
            fields = List.copyOf(fields);
        }
    }

    /** The tensors of this value, tuple fields flattened in order (iteratively: tuples may nest deeply). */
    default List<Tensor> flatten() {
        List<Tensor> out = new ArrayList<>();
        java.util.ArrayDeque<GroupValue> todo = new java.util.ArrayDeque<>();
        todo.push(this);
        while (!todo.isEmpty()) {
            switch (todo.pop()) {
                case One o -> out.add(o.tensor());
                case Tuple t -> {
                    for (int i = t.fields().size() - 1; i >= 0; i--) todo.push(t.fields().get(i));
                }
            }
        }
        return out;
    }
}
