package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.RelationException;

/**
 * How a scatter combines an update with the element already at its target, under TVM's names:
 * {@code update} overwrites (the last update to an index wins), the others fold every update into the
 * element in order, so duplicate indices accumulate. ONNX's {@code none} is {@code update}.
 */
public enum ScatterReduction {
    UPDATE, ADD, MUL, MIN, MAX;

    public static ScatterReduction parse(String op, String attr, String name) {
        return switch (name) {
            case "update" -> UPDATE;
            case "add" -> ADD;
            case "mul" -> MUL;
            case "min" -> MIN;
            case "max" -> MAX;
            default -> throw new RelationException(op + ": " + attr + " must be \"update\", \"add\", \"mul\", \"min\" or \"max\", got \"" + name + "\"");
        };
    }

    /** {@code out[at] = out[at] (op) updates[from]}, in the dtype's own arithmetic (float or integer). */
    void apply(NDArray out, int at, NDArray updates, int from, boolean real) {
        if (real) {
            double u = updates.getDouble(from);
            double v = out.getDouble(at);
            out.setDouble(at, switch (this) {
                case UPDATE -> u;
                case ADD -> v + u;
                case MUL -> v * u;
                case MIN -> Math.min(v, u);
                case MAX -> Math.max(v, u);
            });
        } else {
            long u = updates.getLong(from);
            long v = out.getLong(at);
            out.setLong(at, switch (this) {
                case UPDATE -> u;
                case ADD -> v + u;
                case MUL -> v * u;
                case MIN -> Math.min(v, u);
                case MAX -> Math.max(v, u);
            });
        }
    }
}
