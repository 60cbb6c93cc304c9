package dev.relayfarm.strings;

import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.compile.ExecutableCheck;
import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The string element type end to end: DType spelling, NDArray storage and bytes, JSON and text forms, type errors, the compile refusal. */
class StringTensorTest {
    private static final NDArray WORDS = NDArray.ofStrings(new int[] {2, 2}, "héllo", "", "日本語 ✓", "a\"b\\c\n");

    @Test
    void dtypeIsSpelledStringAndParsesBack() {
        assertEquals("string", DType.STRING.toString());
        assertEquals(DType.STRING, DType.parse("string"));
        assertTrue(DType.isDType("string"));
        assertFalse(DType.isDType("stringx4"));
        assertThrows(IllegalArgumentException.class, () -> new DType(DType.Code.STRING, 0, 4));
    }

    @Test
    void bytesAreLengthPrefixedUtf8AndRoundTrip() {
        byte[] b = WORDS.toBytes();
        // "héllo" is 6 UTF-8 bytes: length 6 little-endian, then the text
        assertArrayEquals(new byte[] {6, 0, 0, 0, 'h', (byte) 0xc3, (byte) 0xa9, 'l', 'l', 'o', 0, 0, 0, 0}, java.util.Arrays.copyOf(b, 14));
        NDArray back = NDArray.fromBytes(DType.STRING, new int[] {2, 2}, b);
        assertTrue(back.contentEquals(WORDS));
        assertEquals(WORDS.contentHash(), back.contentHash());
        assertEquals(WORDS.sha256(), back.sha256());
        assertNotEquals(WORDS.sha256(), NDArray.ofStrings(new int[] {2, 2}, "héllo", "", "日本語 ✓", "x").sha256());
        assertTrue(WORDS.copy().contentEquals(WORDS));
        IllegalArgumentException cut = assertThrows(IllegalArgumentException.class,
                () -> NDArray.fromBytes(DType.STRING, new int[] {2, 2}, java.util.Arrays.copyOf(b, b.length - 1)));
        assertTrue(cut.getMessage().contains("element 3"), cut.getMessage());
    }

    @Test
    void printsQuotedAndRefusesNumericAccess() {
        assertEquals("NDArray(string, [2, 2], [\"héllo\", \"\", \"日本語 ✓\", \"a\\\"b\\\\c\\n\"])", WORDS.toString());
        assertEquals("", NDArray.zeros(DType.STRING, 3).stringData()[2]);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> WORDS.getDouble(0));
        assertTrue(e.getMessage().contains("string tensor"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> WORDS.setLong(0, 1));
        assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(DType.STRING, new int[] {1}, new String[] {null}));
    }

    @Test
    void stringsCompareExactlyUnderTheTolerance() {
        assertTrue(Tolerance.ONNX_DEFAULT.compare(WORDS, WORDS.copy()).isEmpty());
        NDArray other = NDArray.ofStrings(new int[] {2, 2}, "héllo", " ", "日本語 ✓", "a\"b\\c\n");
        String msg = Tolerance.ONNX_DEFAULT.compare(other, WORDS).orElseThrow().message();
        assertTrue(msg.contains("1 of 4 strings differ") && msg.contains("[0, 1]") && msg.contains("got \" \", expected \"\""), msg);
    }

    /** {@code fn (%x: Tensor[(2, 2), string]) { equal(%x, <WORDS>) }}: a string constant in the IR. */
    private static IRModule equalsWords() {
        Var x = Var.fresh("x", new TensorType(List.of(Dim.of(2), Dim.of(2)), DType.STRING));
        return IRModule.fromMain(new Function(List.of(x), new Call(Op.get("equal"), List.of(x, new Constant(WORDS)))));
    }

    @Test
    void aStringConstantSurvivesTheJsonAndTextForms() {
        IRModule m = equalsWords();
        NDArray in = NDArray.ofStrings(new int[] {2, 2}, "héllo", "no", "日本語 ✓", "a\"b\\c\n");
        byte[] expected = {1, 0, 1, 1};
        for (IRModule copy : List.of(IrJson.fromJson(IrJson.toJson(m)), RelayParser.parseModule(RelayPrinter.print(m)))) {
            NDArray y = ((TensorValue) Interpreter.runMain(copy, in)).data();
            assertArrayEquals(expected, y.byteData());
        }
        assertTrue(RelayPrinter.print(m).contains("Tensor[(2, 2), string]"), RelayPrinter.print(m));
    }

    @Test
    void stringAttributesSurviveTheTextForm() {
        Var x = Var.fresh("x", new TensorType(List.of(Dim.of(3)), DType.STRING));
        dev.relayfarm.ir.Attrs re = dev.relayfarm.ir.Attrs.EMPTY.with("pattern", dev.relayfarm.ir.AttrValue.of("\"?\\d+\\\\é"));
        dev.relayfarm.ir.Attrs norm = dev.relayfarm.ir.Attrs.EMPTY.with("stopwords",
                new dev.relayfarm.ir.AttrValue.ListValue(List.of(dev.relayfarm.ir.AttrValue.of("a\"b"), dev.relayfarm.ir.AttrValue.of(""))));
        Call match = new Call(Op.get("strings.regex_full_match"), List.of(new Call(Op.get("strings.normalize"), List.of(x), norm)), re);
        IRModule m = IRModule.fromMain(new Function(List.of(x), match));
        IRModule back = RelayParser.parseModule(RelayPrinter.print(m));
        NDArray in = NDArray.ofStrings(new int[] {3}, "\"12\\é", "a\"b", "1\\é");
        for (IRModule copy : List.of(m, back)) {
            assertArrayEquals(new byte[] {1, 1}, ((TensorValue) Interpreter.runMain(copy, in)).data().byteData(), RelayPrinter.print(copy));
        }
    }

    @Test
    void numericOperatorsRefuseStringsAtTypeInference() {
        Var x = Var.fresh("x", new TensorType(List.of(Dim.of(2)), DType.STRING));
        for (String op : List.of("less", "add", "negative")) {
            Call c = new Call(Op.get(op), op.equals("negative") ? List.of(x) : List.of(x, x));
            RuntimeException e = assertThrows(RuntimeException.class, () -> Stages.inferTypes(IRModule.fromMain(new Function(List.of(x), c))));
            assertTrue(e.getMessage().contains(op + ": does not accept string tensors"), e.getMessage());
        }
        // strings inside a tuple argument too (ONNX Concat of strings)
        Call cat = new Call(Op.get("concatenate"), List.of(new dev.relayfarm.ir.Tuple(List.of(x, x))), dev.relayfarm.ir.Attrs.of("axis", dev.relayfarm.ir.AttrValue.of(0L)));
        RuntimeException e = assertThrows(RuntimeException.class, () -> Stages.inferTypes(IRModule.fromMain(new Function(List.of(x), cat))));
        assertTrue(e.getMessage().contains("concatenate: does not accept string tensors"), e.getMessage());
    }

    @Test
    void compiledArtifactsRefuseStringTensors() {
        IRModule typed = Stages.inferTypes(equalsWords());
        GraphException early = assertThrows(GraphException.class, () -> ExecutableCheck.check(typed));
        assertTrue(early.getMessage().startsWith("string tensors are not supported by compiled artifacts: input %x of @main"), early.getMessage());
        // a string tensor inside the dataflow only: numeric input and output, strings in between
        Var ids = Var.fresh("ids", new TensorType(List.of(Dim.of(3)), DType.INT64));
        NDArray names = NDArray.ofStrings(new int[] {2}, "a", "b");
        NDArray numbers = NDArray.wrap(DType.INT64, new int[] {2}, new long[] {0, 1});
        Call toNames = new Call(Op.get("label_encoder"), List.of(ids, new Constant(numbers), new Constant(names), new Constant(NDArray.ofStrings(new int[0], "?"))));
        Call back = new Call(Op.get("label_encoder"), List.of(toNames, new Constant(names), new Constant(numbers), new Constant(NDArray.scalar(-1L))));
        IRModule inner = Stages.inferTypes(IRModule.fromMain(new Function(List.of(ids), back)));
        GraphException late = assertThrows(GraphException.class, () -> GraphBuilder.build(inner));
        assertTrue(late.getMessage().startsWith("string tensors are not supported by compiled artifacts:"), late.getMessage());
        NDArray y = ((TensorValue) Interpreter.runMain(inner, NDArray.wrap(DType.INT64, new int[] {3}, new long[] {1, 5, 0}))).data();
        assertArrayEquals(new long[] {1, -1, 0}, y.longData());
    }
}
