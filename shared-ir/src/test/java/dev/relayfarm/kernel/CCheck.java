package dev.relayfarm.kernel;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small FileCheck-style matcher for generated code. Directives, one per line:
 * {@code CHECK: text} (found on a later line than the previous match), {@code CHECK-NEXT: text} (on the
 * very next line), {@code CHECK-NOT: text} (absent between the previous and the next match, or to the
 * end). In the text, {@code [[NAME:regex]]} captures, {@code [[NAME]]} must repeat the capture,
 * {@code {{regex}}} matches a regex, and runs of spaces match any horizontal whitespace.
 */
final class CCheck {
    private record Directive(String kind, String pattern, int lineNo) {}

    private CCheck() {}

    static void assertMatches(String checks, String output) {
        List<Directive> ds = new ArrayList<>();
        int n = 0;
        for (String l : checks.strip().split("\n")) {
            n++;
            String t = l.strip();
            if (t.isEmpty()) continue;
            int colon = t.indexOf(':');
            if (colon < 0) throw new IllegalArgumentException("check line " + n + " has no directive: " + t);
            String kind = t.substring(0, colon);
            if (!List.of("CHECK", "CHECK-NEXT", "CHECK-NOT").contains(kind)) throw new IllegalArgumentException("unknown directive " + kind);
            ds.add(new Directive(kind, t.substring(colon + 1).strip(), n));
        }
        String[] lines = output.split("\n", -1);
        Map<String, String> vars = new HashMap<>();
        int pos = -1; // index of the last matched line
        List<Directive> pendingNot = new ArrayList<>();
        for (Directive d : ds) {
            if (d.kind().equals("CHECK-NOT")) {
                pendingNot.add(d);
                continue;
            }
            int found = -1;
            Matcher m = null;
            int from = pos + 1, to = d.kind().equals("CHECK-NEXT") ? Math.min(pos + 2, lines.length) : lines.length;
            for (int i = from; i < to && found < 0; i++) {
                Compiled c = compile(d.pattern(), vars);
                Matcher mm = c.regex.matcher(lines[i]);
                if (mm.find()) {
                    found = i;
                    m = mm;
                    for (Map.Entry<String, String> g : c.groups.entrySet()) vars.put(g.getKey(), mm.group(g.getValue()));
                }
            }
            if (found < 0) throw new AssertionError("check line " + d.lineNo() + " (" + d.kind() + ": " + d.pattern() + ") not found after line " + (pos + 1) + " of:\n" + number(output));
            checkNots(pendingNot, lines, pos + 1, found, vars, output);
            pendingNot.clear();
            pos = found;
        }
        checkNots(pendingNot, lines, pos + 1, lines.length, vars, output);
    }

    private static void checkNots(List<Directive> nots, String[] lines, int from, int to, Map<String, String> vars, String output) {
        for (Directive d : nots) {
            Pattern p = compile(d.pattern(), vars).regex;
            for (int i = from; i < to; i++) {
                if (p.matcher(lines[i]).find()) {
                    throw new AssertionError("check line " + d.lineNo() + " (CHECK-NOT: " + d.pattern() + ") matched line " + (i + 1) + " of:\n" + number(output));
                }
            }
        }
    }

    private record Compiled(Pattern regex, Map<String, String> groups) {}

    private static final Pattern TOKEN = Pattern.compile("\\[\\[([A-Za-z_][A-Za-z0-9_]*)(?::(.*?))?]]|\\{\\{(.*?)}}|\\s+");

    private static Compiled compile(String pattern, Map<String, String> vars) {
        StringBuilder re = new StringBuilder();
        Map<String, String> groups = new HashMap<>();
        int group = 0, last = 0;
        Matcher m = TOKEN.matcher(pattern);
        while (m.find()) {
            re.append(Pattern.quote(pattern.substring(last, m.start())).replace("\\Q\\E", ""));
            if (m.group(1) != null && m.group(2) != null) {
                String javaName = "cap" + (++group);
                groups.put(m.group(1), javaName);
                re.append("(?<").append(javaName).append('>').append(m.group(2)).append(')');
            } else if (m.group(1) != null && groups.containsKey(m.group(1))) {
                re.append("\\k<").append(groups.get(m.group(1))).append('>');
            } else if (m.group(1) != null) {
                String v = vars.get(m.group(1));
                if (v == null) throw new IllegalArgumentException("[[" + m.group(1) + "]] used before it is captured");
                re.append(Pattern.quote(v));
            } else if (m.group(3) != null) {
                re.append("(?:").append(m.group(3)).append(')');
            } else {
                re.append("[ \\t]+");
            }
            last = m.end();
        }
        re.append(Pattern.quote(pattern.substring(last)).replace("\\Q\\E", ""));
        return new Compiled(Pattern.compile(re.toString()), groups);
    }

    private static String number(String text) {
        StringBuilder out = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) out.append(String.format("%4d  %s%n", i + 1, lines[i]));
        return out.toString();
    }
}
