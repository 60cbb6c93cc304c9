package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.attrs;
import static dev.relayfarm.ops.OpTesting.inferText;
import static dev.relayfarm.ops.OpTesting.relationError;
import static dev.relayfarm.ops.OpTesting.run;
import static dev.relayfarm.ops.OpTesting.run1;
import static dev.relayfarm.ops.OpTesting.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The strings.* operators, label_encoder and string equality on hand-checked cases (unicode, empty strings, broadcasting). */
class StringOpsTest {
    private static NDArray s(int[] shape, String... v) {
        return NDArray.ofStrings(shape, v);
    }

    private static int[] shape(int... d) {
        return d;
    }

    private static void assertStrings(NDArray actual, int[] shape, String... expected) {
        assertEquals(DType.STRING, actual.dtype());
        assertArrayEquals(shape, actual.shape());
        assertArrayEquals(expected, actual.stringData());
    }

    private static Attrs withStrings(Attrs a, String key, String... values) {
        return a.with(key, new AttrValue.ListValue(java.util.Arrays.stream(values).map(AttrValue::of).map(v -> (AttrValue) v).toList()));
    }

    @Test
    void concatBroadcastsAndKeepsUnicode() {
        NDArray a = s(shape(2, 1), "ä", "");
        NDArray b = s(shape(3), "x", "日本", "");
        assertStrings(run1("strings.concat", Attrs.EMPTY, a, b), shape(2, 3), "äx", "ä日本", "ä", "x", "日本", "");
        assertStrings(run1("strings.concat", Attrs.EMPTY, s(shape(), "a"), s(shape(), "b")), shape(), "ab");
        assertEquals("Tensor[(2, 3), string]", inferText("strings.concat", Attrs.EMPTY, tensor(DType.STRING, 2, 1), tensor(DType.STRING, 3)));
        assertTrue(relationError("strings.concat", Attrs.EMPTY, tensor(DType.STRING, 2), tensor(DType.INT32, 2)).contains("rhs must be a string tensor, got int32"));
    }

    @Test
    void regexMatchesWholeElementsOnly() {
        NDArray x = s(shape(4), "abc123", "abc", "", "123abc");
        NDArray y = run1("strings.regex_full_match", attrs("pattern", "[a-z]+\\d*"), x);
        assertArrayEquals(new byte[] {1, 1, 0, 0}, y.byteData());
        assertArrayEquals(new byte[] {0, 0, 1, 0}, run1("strings.regex_full_match", attrs("pattern", ""), x).byteData());
        // RE2's named groups and unicode classes
        NDArray named = run1("strings.regex_full_match", attrs("pattern", "(?P<user>\\w+)@(?P<host>[\\w.]+)"), s(shape(2), "me@x.org", "me@"));
        assertArrayEquals(new byte[] {1, 0}, named.byteData());
        assertArrayEquals(new byte[] {1, 0}, run1("strings.regex_full_match", attrs("pattern", "\\p{L}+"), s(shape(2), "ñandú", "n1")).byteData());
        assertArrayEquals(new byte[] {1, 0}, run1("strings.regex_full_match", attrs("pattern", "(?i)éte"), s(shape(2), "ÉTE", "ete")).byteData());
        assertEquals("Tensor[(4), bool]", inferText("strings.regex_full_match", attrs("pattern", "a"), tensor(DType.STRING, 4)));
        assertTrue(relationError("strings.regex_full_match", attrs("pattern", "(a"), tensor(DType.STRING, 4)).contains("invalid pattern \"(a\""));
        assertTrue(relationError("strings.regex_full_match", attrs("pattern", "[[:digit:]]"), tensor(DType.STRING, 4)).contains("POSIX bracket classes"));
    }

    @Test
    void splitWithADelimiterKeepsEmptyTokens() {
        List<NDArray> out = run("strings.split", attrs("delimiter", ","), s(shape(3), "a,,b", "", "c,"));
        assertStrings(out.get(0), shape(3, 3), "a", "", "b", "", "", "", "c", "", "");
        assertArrayEquals(new long[] {3, 1, 2}, out.get(1).longData());
        List<NDArray> max = run("strings.split", attrs("delimiter", "--", "maxsplit", 1), s(shape(1), "x--y--z"));
        assertStrings(max.get(0), shape(1, 2), "x", "y--z");
    }

    @Test
    void splitOnWhitespaceDropsRunsAndEnds() {
        List<NDArray> out = run("strings.split", Attrs.EMPTY, s(shape(2, 1), "  héllo \t wörld\u00a0!  ", "   "));
        assertStrings(out.get(0), shape(2, 1, 3), "héllo", "wörld", "!", "", "", "");
        assertArrayEquals(new long[] {3, 0}, out.get(1).longData());
        assertArrayEquals(shape(2, 1), out.get(1).shape());
        // maxsplit leaves the rest, trailing whitespace included (Python's str.split)
        assertStrings(run("strings.split", attrs("maxsplit", 1), s(shape(1), " a  b c ")).get(0), shape(1, 2), "a", "b c ");
        // an empty delimiter means whitespace, an empty tensor gives [0, 0]
        assertStrings(run("strings.split", attrs("delimiter", ""), s(shape(1), "a b")).get(0), shape(1, 2), "a", "b");
        assertStrings(run("strings.split", Attrs.EMPTY, s(shape(0))).get(0), shape(0, 0));
        assertEquals("(Tensor[(2, 3, ?), string], Tensor[(2, 3), int64])", inferText("strings.split", Attrs.EMPTY, tensor(DType.STRING, 2, 3)));
    }

    @Test
    void normalizeDropsStopwordsThenChangesCase() {
        NDArray x = s(shape(5), "The", "Straße", "the", "ÉTÉ", "");
        Attrs insensitive = withStrings(attrs("case_change_action", "UPPER"), "stopwords", "the");
        assertStrings(run1("strings.normalize", insensitive, x), shape(3), "STRASSE", "ÉTÉ", "");
        Attrs sensitive = withStrings(attrs("case_change_action", "LOWER", "is_case_sensitive", true), "stopwords", "the");
        assertStrings(run1("strings.normalize", sensitive, x), shape(4), "the", "straße", "été", "");
        assertStrings(run1("strings.normalize", Attrs.EMPTY, s(shape(1, 2), "a", "B")), shape(1, 2), "a", "B");
        // all dropped: one empty string, [1] or [1, 1] (ONNX's rule)
        Attrs all = withStrings(Attrs.EMPTY, "stopwords", "a", "b");
        assertStrings(run1("strings.normalize", all, s(shape(2), "A", "b")), shape(1), "");
        assertStrings(run1("strings.normalize", all, s(shape(1, 2), "a", "B")), shape(1, 1), "");
        // a locale's own case rules: Turkish dotted i
        assertStrings(run1("strings.normalize", attrs("case_change_action", "UPPER", "locale", "tr_TR"), s(shape(1), "i")), shape(1), "İ");
        assertEquals("Tensor[(1, ?), string]", inferText("strings.normalize", Attrs.EMPTY, tensor(DType.STRING, 1, 4)));
        assertTrue(relationError("strings.normalize", Attrs.EMPTY, tensor(DType.STRING, 2, 4)).contains("must be [C] or [1, C]"));
        assertTrue(relationError("strings.normalize", attrs("case_change_action", "TITLE"), tensor(DType.STRING, 4)).contains("NONE, LOWER or UPPER"));
    }

    @Test
    void labelEncoderMapsBetweenStringsIntsAndFloats() {
        NDArray keys = s(shape(3), "a", "b", "ä");
        NDArray values = NDArray.wrap(DType.INT64, shape(3), new long[] {1, 2, 3});
        NDArray y = run1("label_encoder", Attrs.EMPTY, s(shape(2, 2), "ä", "c", "", "a"), keys, values, NDArray.scalar(-1L));
        assertArrayEquals(shape(2, 2), y.shape());
        assertArrayEquals(new long[] {3, -1, -1, 1}, y.longData());
        // floats to strings: NaN finds NaN, -0.0 finds 0.0
        NDArray fk = NDArray.wrap(DType.FLOAT32, shape(3), new float[] {Float.NaN, 0f, 1.5f});
        NDArray fy = run1("label_encoder", Attrs.EMPTY, NDArray.wrap(DType.FLOAT32, shape(4), new float[] {-0f, Float.NaN, 2f, 1.5f}),
                fk, s(shape(3), "nan", "zero", "x"), s(shape(), "_Unused"));
        assertStrings(fy, shape(4), "zero", "nan", "_Unused", "x");
        assertEquals("Tensor[(2, 2), int64]", inferText("label_encoder", Attrs.EMPTY, tensor(DType.STRING, 2, 2), tensor(DType.STRING, 3),
                tensor(DType.INT64, 3), tensor(DType.INT64)));
        assertTrue(relationError("label_encoder", Attrs.EMPTY, tensor(DType.INT64, 2), tensor(DType.STRING, 3), tensor(DType.INT64, 3), tensor(DType.INT64))
                .contains("keys are string but the data is int64"));
        assertTrue(relationError("label_encoder", Attrs.EMPTY, tensor(DType.STRING, 2), tensor(DType.STRING, 3), tensor(DType.INT64, 2), tensor(DType.INT64))
                .contains("3 keys but 2 values"));
    }

    @Test
    void equalityComparesTextAndBroadcasts() {
        NDArray y = run1("equal", Attrs.EMPTY, s(shape(2, 2), "é", "e\u0301", "", "x"), s(shape(2), "é", ""));
        assertArrayEquals(new byte[] {1, 0, 0, 0}, y.byteData()); // no unicode normalization: é is not e + combining acute
        assertArrayEquals(new byte[] {0, 1, 1, 1}, run1("not_equal", Attrs.EMPTY, s(shape(2, 2), "é", "e\u0301", "", "x"), s(shape(2), "é", "")).byteData());
        assertEquals("Tensor[(2, 2), bool]", inferText("equal", Attrs.EMPTY, tensor(DType.STRING, 2, 2), tensor(DType.STRING, 2)));
        assertTrue(relationError("less", Attrs.EMPTY, tensor(DType.STRING, 2), tensor(DType.STRING, 2)).contains("less: does not accept string tensors"));
        assertTrue(relationError("cast", attrs("dtype", "float32"), tensor(DType.STRING, 2)).contains("cast: does not accept string tensors"));
        assertTrue(relationError("cast", attrs("dtype", "string"), tensor(DType.INT32, 2)).contains("cast: casting int32 to string is not supported"));
    }
}
