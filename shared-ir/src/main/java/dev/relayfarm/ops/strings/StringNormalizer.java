package dev.relayfarm.ops.strings;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code strings.normalize(x, case_change_action="NONE", is_case_sensitive=False, stopwords=[], locale="")}
 * (ONNX StringNormalizer) over a {@code [C]} or {@code [1, C]} tensor: drops the elements equal to a stopword
 * (ignoring case under the locale's rules unless {@code is_case_sensitive}), then lowercases, uppercases or keeps
 * the rest ({@code LOWER}, {@code UPPER}, {@code NONE}) under the locale ({@code en_US} or {@code en-US}; empty:
 * the root locale). The number left depends on the data ({@code Any} in the type); when every element is dropped
 * the result is one empty string, {@code [1]} or {@code [1, 1]}, as the ONNX spec says.
 */
public final class StringNormalizer {
    private StringNormalizer() {}

    public enum CaseChange { NONE, LOWER, UPPER }

    public record NormalizerAttrs(CaseChange caseChange, boolean caseSensitive, List<String> stopwords, String locale) {}

    public static final OpDef<NormalizerAttrs> DEF = new OpDef<>("strings.normalize", 1, StringNormalizer::parse,
            (types, n, attrs, reporter) -> {
                TensorType x = StringOps.strings("strings.normalize", "input", types.get(0));
                if (x == null) return false;
                boolean matrix = x.rank() == 2;
                if (!(x.rank() == 1 || matrix && x.shape().get(0).equals(Dim.of(1)))) {
                    throw new RelationException("strings.normalize: input must be [C] or [1, C], got " + x);
                }
                reporter.assign(types.get(n), new TensorType(matrix ? List.of(Dim.of(1), Dim.ANY) : List.of(Dim.ANY), DType.STRING));
                return true;
            }, OpPattern.OPAQUE, (in, attrs) -> List.of(compute(in.getFirst(), attrs)));

    static NormalizerAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("strings.normalize", attrs);
        String action = r.string("case_change_action", "NONE");
        CaseChange c;
        try {
            c = CaseChange.valueOf(action);
        } catch (IllegalArgumentException e) {
            throw new RelationException("strings.normalize: case_change_action must be NONE, LOWER or UPPER, got " + NDArray.quote(action));
        }
        NormalizerAttrs a = new NormalizerAttrs(c, r.bool("is_case_sensitive", false), r.strings("stopwords", List.of()), r.string("locale", ""));
        r.finish();
        return a;
    }

    static Locale locale(String name) {
        return name.isEmpty() ? Locale.ROOT : Locale.forLanguageTag(name.replace('_', '-'));
    }

    static NDArray compute(NDArray x, NormalizerAttrs a) {
        Locale loc = locale(a.locale());
        Set<String> stops = new HashSet<>();
        for (String w : a.stopwords()) stops.add(a.caseSensitive() ? w : w.toLowerCase(loc));
        List<String> kept = new ArrayList<>();
        for (String s : x.stringData()) {
            if (stops.contains(a.caseSensitive() ? s : s.toLowerCase(loc))) continue;
            kept.add(switch (a.caseChange()) {
                case NONE -> s;
                case LOWER -> s.toLowerCase(loc);
                case UPPER -> s.toUpperCase(loc);
            });
        }
        if (kept.isEmpty()) kept.add("");
        int c = kept.size();
        return NDArray.wrap(DType.STRING, x.rank() == 2 ? new int[] {1, c} : new int[] {c}, kept.toArray(String[]::new));
    }
}
