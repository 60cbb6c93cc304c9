package dev.relayfarm.ops.strings;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code strings.split(x, delimiter=None, maxsplit=None)} (ONNX StringSplit): splits every element as Python's
 * {@code str.split} does and returns the tuple (substrings {@code x.shape + [maxTokens]}, padded with {@code ""};
 * int64 token counts of shape {@code x.shape}). {@code maxTokens}, the largest count, depends on the data: it is
 * {@code Any} in the type. Without a delimiter (or with {@code ""}), runs of whitespace separate tokens and
 * leading/trailing whitespace yields none (so {@code ""} has 0 tokens); with one, every occurrence separates
 * (so {@code "a,,b"} has 3 tokens and {@code ""} has 1). {@code maxsplit} limits the number of splits; the rest
 * of the element stays in the last token.
 */
public final class StringSplit {
    private StringSplit() {}

    /** {@code delimiter} null (or empty) means whitespace; {@code maxsplit} null means unlimited. */
    public record SplitAttrs(String delimiter, Long maxsplit) {}

    public static final OpDef<SplitAttrs> DEF = new OpDef<>("strings.split", 1, StringSplit::parse,
            (types, n, attrs, reporter) -> {
                TensorType x = StringOps.strings("strings.split", "input", types.get(0));
                if (x == null) return false;
                List<Dim> shape = new ArrayList<>(x.shape());
                shape.add(Dim.ANY);
                reporter.assign(types.get(n), new TupleType(List.of(new TensorType(shape, DType.STRING), new TensorType(x.shape(), DType.INT64))));
                return true;
            }, OpPattern.OPAQUE, (in, attrs) -> compute(in.getFirst(), attrs));

    static SplitAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("strings.split", attrs);
        String d = r.string("delimiter", null);
        Long m = r.has("maxsplit") ? r.integer("maxsplit", -1) : null;
        r.integer("maxsplit", -1); // an explicit None counts as read
        r.finish();
        if (m != null && m < 0) throw new RelationException("strings.split: maxsplit must be >= 0, got " + m);
        return new SplitAttrs(d == null || d.isEmpty() ? null : d, m);
    }

    static List<NDArray> compute(NDArray x, SplitAttrs a) {
        String[] in = x.stringData();
        List<List<String>> tokens = new ArrayList<>(in.length);
        int width = 0;
        long limit = a.maxsplit() == null ? Long.MAX_VALUE : a.maxsplit();
        for (String s : in) {
            List<String> t = a.delimiter() == null ? splitWhitespace(s, limit) : split(s, a.delimiter(), limit);
            tokens.add(t);
            width = Math.max(width, t.size());
        }
        int[] shape = x.shape();
        int[] outShape = java.util.Arrays.copyOf(shape, shape.length + 1);
        outShape[shape.length] = width;
        NDArray y = NDArray.zeros(DType.STRING, outShape); // "" everywhere
        String[] ys = y.stringData();
        long[] counts = new long[in.length];
        for (int i = 0; i < in.length; i++) {
            List<String> t = tokens.get(i);
            counts[i] = t.size();
            for (int k = 0; k < t.size(); k++) ys[i * width + k] = t.get(k);
        }
        return List.of(y, NDArray.wrap(DType.INT64, shape, counts));
    }

    /** Python's {@code s.split(sep, maxsplit)} with a non-empty separator. */
    static List<String> split(String s, String sep, long maxsplit) {
        List<String> out = new ArrayList<>();
        int from = 0;
        while (out.size() < maxsplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) break;
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    /** Python's {@code s.split(None, maxsplit)}: whitespace runs separate, no empty tokens; the rest keeps trailing whitespace. */
    static List<String> splitWhitespace(String s, long maxsplit) {
        List<String> out = new ArrayList<>();
        int i = 0, n = s.length();
        while (out.size() < maxsplit) {
            while (i < n && isSpace(s.charAt(i))) i++;
            if (i == n) break;
            int j = i;
            while (i < n && !isSpace(s.charAt(i))) i++;
            out.add(s.substring(j, i));
        }
        while (i < n && isSpace(s.charAt(i))) i++;
        if (i < n) out.add(s.substring(i));
        return out;
    }

    /** Python's {@code str.isspace} for one character: Unicode white space, separators and the ASCII/C1 separators. */
    static boolean isSpace(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085';
    }
}
