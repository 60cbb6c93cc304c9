package dev.relayfarm.ir;

import java.util.List;

/**
 * Prints types the way TVM does: {@code Tensor[(10, 4), float32]}, scalars as their dtype,
 * {@code (int32, float32)}, {@code fn (Tensor[(3), float32]) -> Tensor[(3), float32]},
 * {@code List[A]}, {@code ref(float32)}. The Relay text parser reads this form back.
 */
public final class TypeFormat {
    private TypeFormat() {}

    public static String format(Type type) {
        StringBuilder sb = new StringBuilder();
        append(sb, type);
        return sb.toString();
    }

    public static void append(StringBuilder sb, Type type) {
        switch (type) {
            case TensorType t -> {
                if (t.isScalar()) {
                    sb.append(t.dtype());
                    return;
                }
                sb.append("Tensor[(");
                for (int i = 0; i < t.shape().size(); i++) {
                    if (i > 0) sb.append(", ");
                    sb.append(t.shape().get(i));
                }
                sb.append("), ").append(t.dtype()).append(']');
            }
            case TupleType t -> {
                sb.append('(');
                appendList(sb, t.fields());
                if (t.fields().size() == 1) sb.append(',');
                sb.append(')');
            }
            case FuncType f -> {
                sb.append("fn ");
                if (!f.typeParams().isEmpty()) {
                    sb.append('[');
                    appendList(sb, f.typeParams());
                    sb.append(']');
                }
                sb.append('(');
                appendList(sb, f.argTypes());
                sb.append(") -> ");
                append(sb, f.retType());
            }
            case TypeVar v -> sb.append(v.name());
            case GlobalTypeVar g -> sb.append(g.name());
            case TypeCall c -> {
                append(sb, c.func());
                sb.append('[');
                appendList(sb, c.args());
                sb.append(']');
            }
            case RefType r -> {
                sb.append("ref(");
                append(sb, r.value());
                sb.append(')');
            }
            case IncompleteType i -> sb.append('_');
        }
    }

    private static void appendList(StringBuilder sb, List<? extends Type> types) {
        for (int i = 0; i < types.size(); i++) {
            if (i > 0) sb.append(", ");
            append(sb, types.get(i));
        }
    }
}
