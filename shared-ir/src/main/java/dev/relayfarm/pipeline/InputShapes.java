package dev.relayfarm.pipeline;

import dev.relayfarm.frontend.ImportOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shapes that bind a model's dynamic input dims: {@code x=1x3x224x224}, one per input. The CLI takes one
 * {@code --shape} per input; jobs carry them joined by commas ({@code "x=1x3x224x224,y=1x10"}).
 */
public final class InputShapes {
    private InputShapes() {}

    /**
     * The bindings in the order given (a name given twice keeps its last dims). Throws a
     * {@link ModelInputException} naming a malformed entry.
     */
    public static Map<String, List<Long>> of(List<String> specs) {
        Map<String, List<Long>> bound = new LinkedHashMap<>();
        for (String s : specs) {
            Map.Entry<String, List<Long>> e;
            try {
                e = ImportOptions.parseShape(s);
            } catch (IllegalArgumentException ex) {
                throw new ModelInputException(ex.getMessage());
            }
            if (e.getKey().isEmpty()) throw new ModelInputException("shape '" + s + "' names no input");
            bound.put(e.getKey(), e.getValue());
        }
        return bound;
    }

    /**
     * The comma-joined form, e.g. {@code "x=1x3x224x224,y=1x10"}; blank means none. Dims may themselves
     * be comma-separated ({@code x=1,3,224,224}, as {@code --shape} allows), so an entry starts only at
     * a comma followed by {@code NAME=}.
     */
    public static Map<String, List<Long>> parse(String joined) {
        if (joined == null || joined.isBlank()) return Map.of();
        List<String> specs = new ArrayList<>();
        for (String s : joined.split(",(?=[^,=]*=)")) specs.add(s.trim());
        return of(specs);
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
