package dev.relayfarm.services.gateway;

import dev.relayfarm.frontend.ImportOptions;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks the {@code shapes} field of a submit: comma-separated {@code NAME=D0xD1x...} entries with positive
 * dimensions, each name once, e.g. {@code x=1x3x224x224,mask=1x224}. The text travels to the importer unchanged
 * (compile.requested {@code options.shapes}); checking it here turns a typo into a 400 instead of a failed job.
 * Each entry is read with the importer's own {@link ImportOptions#parseShape}, so the two cannot disagree.
 */
final class InputShapes {
    private InputShapes() {}

    /** The normalized text (entries trimmed, empty entries rejected); {@code ""} when none were given. */
    static String check(String shapes) {
        if (shapes == null || shapes.isBlank()) return "";
        Set<String> seen = new HashSet<>();
        StringBuilder out = new StringBuilder();
        for (String raw : shapes.split(",", -1)) {
            String entry = raw.trim();
            String why = problem(entry, seen);
            if (why != null) {
                throw new ApiProblem(ProblemType.BAD_SHAPES, "shapes: entry '" + entry + "' " + why
                        + " (expected NAME=D0xD1x..., entries separated by commas, e.g. x=1x3x224x224)");
            }
            if (!out.isEmpty()) out.append(',');
            out.append(entry);
        }
        return out.toString();
    }

    private static String problem(String entry, Set<String> seen) {
        if (entry.isEmpty()) return "is empty";
        Map.Entry<String, List<Long>> parsed;
        try {
            parsed = ImportOptions.parseShape(entry);
        } catch (IllegalArgumentException e) {
            return "is malformed";
        }
        if (parsed.getKey().isEmpty()) return "has no input name";
        if (parsed.getValue().isEmpty()) return "has no dimensions";
        if (parsed.getValue().stream().anyMatch(d -> d < 1)) return "has a dimension below 1";
        if (!seen.add(parsed.getKey())) return "names input '" + parsed.getKey() + "' a second time";
        return null;
    }
}
