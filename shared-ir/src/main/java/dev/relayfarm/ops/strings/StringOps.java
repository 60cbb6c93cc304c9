package dev.relayfarm.ops.strings;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.Broadcast;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Operators over string tensors (ONNX's text operators): {@code strings.concat}, {@code strings.regex_full_match},
 * {@code strings.split}, {@code strings.normalize}, and {@code label_encoder} (a lookup table between strings,
 * integers and floats). Their kernels run in the interpreter only: compiled artifacts hold no strings, and
 * {@code OpComputesCoverageTest} lists them as interpreter-only. This list is the family's single registration point.
 */
public final class StringOps {
    private StringOps() {}

    public static List<OpDef<?>> defs() {
        return List.of(CONCAT, REGEX_FULL_MATCH, StringSplit.DEF, StringNormalizer.DEF, LabelEncoder.DEF);
    }

    /** The tensor type of {@code t} (null while unknown), which must hold strings. */
    static TensorType strings(String op, String what, Type t) {
        TensorType x = Rel.tensor(op, what, t);
        if (x != null && !x.dtype().isString()) throw new RelationException(op + ": " + what + " must be a string tensor, got " + x.dtype());
        return x;
    }

    /** {@code strings.concat(a, b)}: element-wise {@code a + b}, broadcasting like numpy (ONNX StringConcat). */
    public static final OpDef<NoAttrs> CONCAT = new OpDef<>("strings.concat", 2, a -> NoAttrs.parse("strings.concat", a),
            (types, n, attrs, reporter) -> {
                TensorType a = strings("strings.concat", "lhs", types.get(0)), b = strings("strings.concat", "rhs", types.get(1));
                if (a == null || b == null) return false;
                reporter.assign(types.get(n), new TensorType(Broadcast.shape("strings.concat", a.shape(), b.shape()), DType.STRING));
                return true;
            }, OpPattern.BROADCAST, (in, attrs) -> List.of(concat(in.get(0), in.get(1))));

    static NDArray concat(NDArray a, NDArray b) {
        int[] shape = Broadcast.shape("strings.concat", a.shape(), b.shape());
        String[] x = a.stringData(), y = b.stringData();
        String[] z = new String[NDArray.elementCount(DType.STRING, shape)];
        int[] ia = broadcastIndex(a.shape(), shape), ib = broadcastIndex(b.shape(), shape);
        for (int i = 0; i < z.length; i++) z[i] = x[ia[i]].concat(y[ib[i]]);
        return NDArray.wrap(DType.STRING, shape, z);
    }

    /** For every element of {@code out} (row-major), the flat index of the element of {@code in} that broadcasts to it. */
    static int[] broadcastIndex(int[] in, int[] out) {
        int total = 1;
        for (int d : out) total *= d;
        int[] idx = new int[total];
        int offset = out.length - in.length;
        int[] strides = new int[out.length];
        for (int d = in.length - 1, s = 1; d >= 0; d--) {
            strides[d + offset] = in[d] == 1 ? 0 : s;
            s *= in[d];
        }
        int[] coord = new int[out.length];
        for (int i = 0; i < total; i++) {
            int f = 0;
            for (int d = 0; d < out.length; d++) f += coord[d] * strides[d];
            idx[i] = f;
            for (int d = out.length - 1; d >= 0; d--) {
                if (++coord[d] < out[d]) break;
                coord[d] = 0;
            }
        }
        return idx;
    }

    /** Attributes of {@code strings.regex_full_match}: the pattern, in java.util.regex syntax (see {@link #compile}). */
    public record RegexAttrs(String pattern) {}

    /**
     * {@code strings.regex_full_match(x, pattern=...)}: bool, true where the whole element matches (ONNX RegexFullMatch).
     * ONNX specifies RE2 syntax; java.util.regex reads RE2's common syntax the same way: classes and ranges,
     * greedy and lazy quantifiers, groups, alternation, anchors, ASCII-only {@code \d \w \s \b} (as in RE2),
     * Unicode classes {@code \p{L}}, {@code \Q...\E}, and {@code (?i)}, made Unicode-aware like RE2's with
     * {@link Pattern#UNICODE_CASE}. Where they differ: RE2's named groups {@code (?P<name>re)} are rewritten to
     * Java's {@code (?<name>re)}; RE2's POSIX bracket classes ({@code [[:digit:]]}) are refused, since Java would
     * read them as a plain set of characters; Java's {@code \v} is any vertical whitespace where RE2's is the vertical
     * tab only; Java also accepts backreferences, lookaround and possessive quantifiers, which RE2 rejects (so no
     * valid RE2 pattern contains them). Java's backtracking can take exponential time on pathological patterns where
     * RE2 is linear.
     */
    public static final OpDef<RegexAttrs> REGEX_FULL_MATCH = new OpDef<>("strings.regex_full_match", 1, StringOps::parseRegex,
            (types, n, attrs, reporter) -> {
                TensorType x = strings("strings.regex_full_match", "input", types.get(0));
                if (x == null) return false;
                compile(attrs.pattern());
                reporter.assign(types.get(n), new TensorType(x.shape(), DType.BOOL));
                return true;
            }, OpPattern.ELEMWISE, (in, attrs) -> {
                Pattern p = compile(attrs.pattern());
                String[] x = in.getFirst().stringData();
                byte[] z = new byte[x.length];
                for (int i = 0; i < x.length; i++) z[i] = p.matcher(x[i]).matches() ? (byte) 1 : 0;
                return List.of(NDArray.wrap(DType.BOOL, in.getFirst().shape(), z));
            });

    static RegexAttrs parseRegex(Attrs attrs) {
        AttrReader r = new AttrReader("strings.regex_full_match", attrs);
        RegexAttrs a = new RegexAttrs(r.string("pattern", null));
        r.finish();
        if (a.pattern() == null) throw new RelationException("strings.regex_full_match: attribute 'pattern' is required");
        return a;
    }

    /** The pattern compiled, RE2 named groups translated; a bad pattern is the model's error, naming the pattern. */
    static Pattern compile(String re2) {
        if (re2.contains("[[:")) {
            throw new RelationException("strings.regex_full_match: POSIX bracket classes such as [[:digit:]] are RE2 syntax java.util.regex "
                    + "would misread; use \\p{Digit}-style classes (pattern " + NDArray.quote(re2) + ")");
        }
        try {
            return Pattern.compile(re2.replace("(?P<", "(?<"), Pattern.UNICODE_CASE);
        } catch (PatternSyntaxException e) {
            throw new RelationException("strings.regex_full_match: invalid pattern " + NDArray.quote(re2) + ": " + e.getDescription());
        }
    }
}
