package dev.relayfarm.pipeline;

import dev.relayfarm.frontend.ImportOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one parser of the shapes that bind a model's dynamic input dims: {@code x=1x3x224x224}, one per input. The CLI
 * takes one {@code --shape} per input; jobs carry them joined by commas in their {@code shapes} field
 * ({@code "x=1x3x224x224,y=1x10"}), which the gateway checks with this class before it queues the job. Errors are
 * {@link InputShapeException}s naming where the shapes came from ({@link #CLI} or {@link #JOB}), so a farm user is not
 * told about a flag they never typed.
 *
 * <p>The rules ({@link ShapeProblem}): {@code NAME=DIMS} with a name and at least one dim, dims separated by {@code x}
 * (or by commas, as {@code --shape x=1,3,224,224} allows), every dim at least 1 or {@code ?}, an element count that fits
 * a 64-bit count, each input bound once. A {@code ?} keeps the dim as the model declares it ({@link ImportOptions#ANY_DIM}):
 * {@code x=1x3x48x?} binds batch and height and leaves the width dynamic ({@code Any}).
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

    /** The bindings {@code specs} give, one per spec, in the order given; errors start with {@code source}. */
    public static Map<String, List<Long>> of(List<String> specs, String source) {
        Map<String, List<Long>> bound = new LinkedHashMap<>();
        for (String s : specs) bind(bound, s, source);
        return bound;
    }

    /**
     * A job's {@code shapes} field, the comma-joined form, e.g. {@code "x=1x3x224x224,y=1x10"}; blank means none. Dims
     * may themselves be comma-separated ({@code x=1,3,224,224}): a piece without {@code =} continues the dims of the
     * entry before it.
     */
    public static Map<String, List<Long>> parse(String joined) {
        if (joined == null || joined.isBlank()) return Map.of();
        List<String> entries = new ArrayList<>();
        for (String piece : joined.split(",", -1)) {
            String p = piece.trim();
            if (p.isEmpty()) throw new InputShapeException(new ShapeProblem.Empty(), JOB);
            if (p.contains("=") || entries.isEmpty()) entries.add(p);
            else entries.set(entries.size() - 1, entries.getLast() + "," + p);
        }
        return of(entries, JOB);
    }

    private static void bind(Map<String, List<Long>> bound, String spec, String source) {
        int eq = spec.lastIndexOf('=');
        if (eq < 0) throw new InputShapeException(new ShapeProblem.Malformed(spec), source);
        String name = spec.substring(0, eq).trim();
        String text = spec.substring(eq + 1).trim();
        if (name.isEmpty()) throw new InputShapeException(new ShapeProblem.Unnamed(spec), source);
        if (text.isEmpty()) throw new InputShapeException(new ShapeProblem.Undimensioned(spec), source);
        List<Long> dims = new ArrayList<>();
        int notPositive = -1;
        for (String d : text.split("[x,]", -1)) {
            if (d.trim().equals("?")) {
                dims.add(ImportOptions.ANY_DIM);
                continue;
            }
            try {
                long v = Long.parseLong(d.trim());
                // a typed -1 (ONNX's spelling of "dynamic") is refused like 0, not taken for '?': as a binding it reads like a size
                if (v < 1 && notPositive < 0) notPositive = dims.size();
                dims.add(v);
            } catch (NumberFormatException e) {
                throw new InputShapeException(new ShapeProblem.Malformed(spec), source);
            }
        }
        if (notPositive >= 0) throw new InputShapeException(new ShapeProblem.NotPositive(spec, name, List.copyOf(dims), notPositive), source);
        long n = 1;
        for (long d : dims) {
            if (d == ImportOptions.ANY_DIM) continue; // its size is the run's, not a count to check now
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new InputShapeException(new ShapeProblem.Overflow(spec, name, List.copyOf(dims)), source);
            }
        }
        if (bound.put(name, List.copyOf(dims)) != null) throw new InputShapeException(new ShapeProblem.Duplicate(spec, name), source);
    }

    /** {@code 1x3x224x224}, {@code 1x3x48x?}. */
    static String dims(List<Long> dims) {
        return String.join("x", dims.stream().map(d -> d == ImportOptions.ANY_DIM ? "?" : String.valueOf(d)).toList());
    }

    /** The comma-joined form of {@code shapes} ({@link #parse} reads it back). */
    public static String format(Map<String, List<Long>> shapes) {
        List<String> out = new ArrayList<>();
        for (var e : shapes.entrySet()) out.add(e.getKey() + "=" + dims(e.getValue()));
        return String.join(",", out);
    }
}
