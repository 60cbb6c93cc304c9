package dev.relayfarm.pipeline;

import dev.relayfarm.frontend.ImportOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shapes that bind a model's dynamic input dims: {@code x=1x3x224x224}, one per input. The CLI takes one
 * {@code --shape} per input; jobs carry them joined by commas in their {@code shapes} field
 * ({@code "x=1x3x224x224,y=1x10"}). Errors name where the shapes came from ({@link #CLI} or {@link #JOB}), so a
 * farm user is not told about a flag they never typed.
 */
public final class InputShapes {
    /** How the CLI spells the shapes in messages. */
    public static final String CLI = "--shape";
    /** How a farm job spells them: its {@code shapes} field. */
    public static final String JOB = "shapes";

    private InputShapes() {}

    /** The CLI's {@code --shape} values ({@link #of(List, String)} with {@link #CLI}). */
    public static Map<String, List<Long>> of(List<String> specs) {
        return of(specs, CLI);
    }

    /**
     * The bindings in the order given (a name given twice keeps its last dims). Throws a
     * {@link ModelInputException}, starting with {@code source}, naming a malformed entry, a dim that is not
     * positive, or an element count that overflows a 64-bit count.
     */
    public static Map<String, List<Long>> of(List<String> specs, String source) {
        Map<String, List<Long>> bound = new LinkedHashMap<>();
        for (String s : specs) {
            Map.Entry<String, List<Long>> e;
            try {
                e = ImportOptions.parseShape(s);
            } catch (IllegalArgumentException ex) {
                throw new ModelInputException(source + " expects NAME=D0xD1x..., got '" + s + "'");
            }
            if (e.getKey().isEmpty()) throw new ModelInputException(source + ": shape '" + s + "' names no input");
            String text = e.getKey() + "=" + dims(e.getValue());
            for (int i = 0; i < e.getValue().size(); i++) {
                // a bound dim is the size of a real buffer: 0 or -1 ("dynamic" in ONNX) would only fail later and obscurely
                if (e.getValue().get(i) < 1) throw new ModelInputException(source + ": " + text + ": dim " + i + " is " + e.getValue().get(i) + ", dims must be positive");
            }
            elementCount(e.getKey(), e.getValue(), source);
            bound.put(e.getKey(), e.getValue());
        }
        return bound;
    }

    /**
     * The element count of {@code dims}; a {@link ModelInputException} when it overflows a long (which a
     * wrapping product would turn into a small or negative count, reported later as a "dynamic shape").
     */
    static long elementCount(String name, List<Long> dims, String source) {
        long n = 1;
        for (long d : dims) {
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new ModelInputException(source + ": element count of " + name + " (" + dims(dims) + ") overflows a 64-bit count");
            }
        }
        return n;
    }

    /** {@code 1x3x224x224}. */
    static String dims(List<Long> dims) {
        return String.join("x", dims.stream().map(String::valueOf).toList());
    }

    /**
     * A job's {@code shapes} field, the comma-joined form, e.g. {@code "x=1x3x224x224,y=1x10"}; blank means none. Dims may themselves
     * be comma-separated ({@code x=1,3,224,224}, as {@code --shape} allows), so an entry starts only at
     * a comma followed by {@code NAME=}.
     */
    public static Map<String, List<Long>> parse(String joined) {
        if (joined == null || joined.isBlank()) return Map.of();
        List<String> specs = new ArrayList<>();
        for (String s : joined.split(",(?=[^,=]*=)")) specs.add(s.trim());
        return of(specs, JOB);
    }

    /** The comma-joined form of {@code shapes} ({@link #parse} reads it back). */
    public static String format(Map<String, List<Long>> shapes) {
        List<String> out = new ArrayList<>();
        for (var e : shapes.entrySet()) {
            out.add(e.getKey() + "=" + String.join("x", e.getValue().stream().map(String::valueOf).toList()));
        }
        return String.join(",", out);
    }
}
