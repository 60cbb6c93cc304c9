package dev.relayfarm.pipeline;

import java.util.List;

/**
 * The rule an input-shape binding breaks ({@link InputShapes} checks them all, for {@code --shape} and for a job's
 * {@code shapes} field alike). {@link #message} words it as the library reports it, naming where the shapes came
 * from; the gateway words the same problem in its REST problem detail. Each carries {@link #entry()}, the binding
 * as the user wrote it.
 */
public sealed interface ShapeProblem {
    /** The binding as given ({@code ""} for an empty one). */
    String entry();

    /** The message of the {@link InputShapeException}, starting with {@code source} ({@link InputShapes#CLI} or {@link InputShapes#JOB}). */
    String message(String source);

    /** Nothing between two commas, or before the first or after the last. */
    record Empty() implements ShapeProblem {
        public String entry() {
            return "";
        }

        public String message(String source) {
            return source + " expects NAME=D0xD1x..., got an empty entry";
        }
    }

    /** Not {@code NAME=D0xD1x...}: no {@code =}, or a dim that is neither an integer nor {@code ?}. */
    record Malformed(String entry) implements ShapeProblem {
        public String message(String source) {
            return source + " expects NAME=D0xD1x..., got '" + entry + "'";
        }
    }

    /** Nothing before the {@code =}. */
    record Unnamed(String entry) implements ShapeProblem {
        public String message(String source) {
            return source + ": shape '" + entry + "' names no input";
        }
    }

    /** Nothing after the {@code =}. */
    record Undimensioned(String entry) implements ShapeProblem {
        public String message(String source) {
            return source + ": shape '" + entry + "' has no dims";
        }
    }

    /**
     * A dim below 1: a bound dim is the size of a real buffer, and 0 or -1 ("dynamic" in ONNX) would only fail later
     * and obscurely; {@code ?} is how a binding leaves a dim dynamic. {@code dims} ends with the offending dim.
     */
    record NotPositive(String entry, String name, List<Long> dims, int index) implements ShapeProblem {
        public String message(String source) {
            // the dims as typed: a typed -1 and a '?' are the same value in dims (ImportOptions.ANY_DIM), not in the entry
            List<String> typed = java.util.Arrays.stream(entry.substring(entry.lastIndexOf('=') + 1).split("[x,]", -1)).map(String::trim).toList();
            return source + ": " + name + "=" + String.join("x", typed) + ": dim " + index + " is " + dims.get(index)
                    + ", dims must be positive (? keeps a dim dynamic)";
        }
    }

    /** An element count past a 64-bit count (which a wrapping product would turn into a small or negative one). */
    record Overflow(String entry, String name, List<Long> dims) implements ShapeProblem {
        public String message(String source) {
            return source + ": element count of " + name + " (" + InputShapes.dims(dims) + ") overflows a 64-bit count";
        }
    }

    /** The same input bound a second time. */
    record Duplicate(String entry, String name) implements ShapeProblem {
        public String message(String source) {
            return source + ": input " + name + " is bound twice";
        }
    }
}
