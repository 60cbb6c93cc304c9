package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.f32;
import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.str;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * CausalConvWithState, LinearAttention (closed forms of recurrences) and FlexAttention: small cases
 * checked by hand, LinearAttention's every update rule against the recurrence written out step by
 * step here, and the errors for attributes and inputs outside the spec.
 */
class RecurrentStateConvertersTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;

    /**
     * Imports a one-node graph (opset 27, plus ai.onnx.preview 1) over inputs a, b, ... (null: an
     * absent optional input) with {@code outputs} outputs and runs it in the interpreter.
     */
    static List<NDArray> run(String op, String domain, List<NDArray> inputs, int outputs, AttributeProto... attrs) {
        GraphProto.Builder g = GraphProto.newBuilder();
        List<String> names = new ArrayList<>();
        List<NDArray> given = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            if (inputs.get(i) == null) {
                names.add("");
                continue;
            }
            String name = String.valueOf((char) ('a' + i));
            names.add(name);
            given.add(inputs.get(i));
            g.addInput(tensor(name, F, Arrays.stream(inputs.get(i).shape()).boxed().toArray()));
        }
        List<String> outs = new ArrayList<>();
        for (int i = 0; i < outputs; i++) {
            outs.add("y" + i);
            g.addOutput(tensor("y" + i, F));
        }
        NodeProto n = node(op, "n", names, outs, attrs).toBuilder().setDomain(domain).build();
        g.addNode(n);
        ModelProto m = ModelProto.newBuilder().setIrVersion(10).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(27))
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("ai.onnx.preview").setVersion(1)).setGraph(g).build();
        IRModule module = OnnxImporter.importModel(m, "m.onnx", null, ImportOptions.DEFAULT);
        Value v = Interpreter.runMain(module, given.toArray(NDArray[]::new));
        if (v instanceof TensorValue t) return List.of(t.data());
        return ((TupleValue) v).fields().stream().map(f -> ((TensorValue) f).data()).toList();
    }

    private static String error(String op, List<NDArray> inputs, int outputs, AttributeProto... attrs) {
        return assertThrows(RuntimeException.class, () -> run(op, "", inputs, outputs, attrs)).getMessage();
    }

    private static AttributeProto floatAttr(String name, float v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOAT).setF(v).build();
    }

    // ---------------------------------------------------------------- CausalConvWithState

    @Test
    void causalConvSlidesOverThePastStateThenTheInput() {
        // channel 0: weights (1, 10) over [past 5 | 1 2 3] -> 5+10, 1+20, 2+30, plus bias 100
        NDArray x = f32(new int[] {1, 1, 3}, 1, 2, 3);
        NDArray w = f32(new int[] {1, 1, 2}, 1, 10);
        NDArray bias = f32(new int[] {1}, 100);
        NDArray past = f32(new int[] {1, 1, 1}, 5);
        List<NDArray> y = run("CausalConvWithState", "", List.of(x, w, bias, past), 2);
        assertArrayEquals(new float[] {115, 121, 132}, y.get(0).floatData(), 1e-5f);
        assertArrayEquals(new float[] {3}, y.get(1).floatData());
        // no past: the first position sees a zero; silu(x) = x * sigmoid(x)
        List<NDArray> s = run("CausalConvWithState", "", List.of(x, w), 2, str("activation", "silu"));
        float[] pre = {10, 21, 32};
        for (int i = 0; i < 3; i++) assertEquals(pre[i] / (1 + Math.exp(-pre[i])), s.get(0).floatData()[i], 1e-4);
        assertArrayEquals(new float[] {3}, s.get(1).floatData());
    }

    @Test
    void causalConvOfKernelOneHasAnEmptyState() {
        NDArray x = f32(new int[] {1, 2, 2}, 1, 2, 3, 4);
        List<NDArray> y = run("CausalConvWithState", "", List.of(x, f32(new int[] {2, 1, 1}, 2, -1)), 2);
        assertArrayEquals(new float[] {2, 4, -3, -4}, y.get(0).floatData());
        assertArrayEquals(new int[] {1, 2, 0}, y.get(1).shape());
    }

    @Test
    void causalConvRejectsUnknownActivationsAndMisshapenInputs() {
        NDArray x = f32(new int[] {1, 2, 3}, 1, 2, 3, 4, 5, 6);
        NDArray w = f32(new int[] {2, 1, 2}, 1, 1, 1, 1);
        String a = error("CausalConvWithState", List.of(x, w), 2, str("activation", "relu"));
        assertTrue(a.contains("activation \"relu\" is not one of none, silu, swish"), a);
        String ws = error("CausalConvWithState", List.of(x, f32(new int[] {3, 1, 2}, 1, 1, 1, 1, 1, 1)), 2);
        assertTrue(ws.contains("weight must be [channels=2, 1, k >= 1], got"), ws);
        String ps = error("CausalConvWithState", Arrays.asList(x, w, null, f32(new int[] {1, 2, 2}, 0, 0, 0, 0)), 2);
        assertTrue(ps.contains("past_state must be [1, 2, 1] (batch, channels, k - 1)"), ps);
    }

    // ---------------------------------------------------------------- LinearAttention

    @Test
    void linearAttentionAccumulatesOuterProductsByHand() {
        // one head of size 1, scale 1: S1 = 3*5 = 15, o1 = 1*15; S2 = 15 + 4*6 = 39, o2 = 2*39
        NDArray q = f32(new int[] {1, 2, 1}, 1, 2), k = f32(new int[] {1, 2, 1}, 3, 4), v = f32(new int[] {1, 2, 1}, 5, 6);
        List<NDArray> y = run("LinearAttention", "", List.of(q, k, v), 2, intAttr("q_num_heads", 1), intAttr("kv_num_heads", 1),
                str("update_rule", "linear"), floatAttr("scale", 1));
        assertArrayEquals(new float[] {15, 78}, y.get(0).floatData(), 1e-5f);
        assertArrayEquals(new float[] {39}, y.get(1).floatData(), 1e-5f);
        // delta with beta 1/2 and a past state 2: u1 = (5 - 2*3)/2 = -0.5, S1 = 2 - 1.5 = 0.5, o1 = 0.5;
        // u2 = (6 - 0.5*4)/2 = 2, S2 = 0.5 + 8 = 8.5, o2 = 17
        NDArray half = f32(new int[] {1, 2, 1}, 0.5, 0.5), past = f32(new int[] {1, 1, 1, 1}, 2);
        List<NDArray> d = run("LinearAttention", "", Arrays.asList(q, k, v, past, null, half), 2, intAttr("q_num_heads", 1),
                intAttr("kv_num_heads", 1), str("update_rule", "delta"), floatAttr("scale", 1));
        assertArrayEquals(new float[] {0.5f, 17}, d.get(0).floatData(), 1e-5f);
        assertArrayEquals(new float[] {8.5f}, d.get(1).floatData(), 1e-5f);
    }

    /** Every update rule, grouped heads, a past state, per-head and per-key-dim decay, erase gate: against the step-by-step recurrence. */
    @Test
    void linearAttentionMatchesTheRecurrenceStepByStep() {
        int b = 2, t = 7, hq = 4, hkv = 2, dk = 3, dv = 2;
        Random r = new Random(7);
        for (String rule : List.of("linear", "gated", "delta", "gated_delta")) {
            for (boolean perDim : new boolean[] {false, true}) {
                for (boolean withPast : new boolean[] {false, true}) {
                    boolean gating = rule.startsWith("gated"), delta = rule.endsWith("delta");
                    if (!gating && perDim) continue;
                    NDArray q = rand(r, 1, b, t, hq * dk), k = rand(r, 0.5, b, t, hkv * dk), v = rand(r, 1, b, t, hkv * dv);
                    NDArray past = withPast ? rand(r, 1, b, hkv, dk, dv) : null;
                    NDArray decay = gating ? negative(rand(r, 0.3, b, t, perDim ? hkv * dk : hkv)) : null;
                    NDArray beta = delta ? sigmoid(rand(r, 1, b, t, perDim ? 1 : hkv)) : null;
                    NDArray erase = delta && perDim ? sigmoid(rand(r, 1, b, t, hkv * dk)) : null;
                    List<NDArray> in = new ArrayList<>(Arrays.asList(q, k, v, past, decay, beta, erase));
                    while (in.getLast() == null) in.removeLast();
                    List<NDArray> got = run("LinearAttention", "", in, 2, intAttr("q_num_heads", hq), intAttr("kv_num_heads", hkv),
                            str("update_rule", rule), intAttr("chunk_size", 64));
                    double[][] want = recurrence(q, k, v, past, decay, beta, erase, hq, hkv, 1 / Math.sqrt(dk));
                    String what = rule + (perDim ? " per-dim" : "") + (withPast ? " with past" : "");
                    assertClose(want[0], got.get(0), what + " output");
                    assertClose(want[1], got.get(1), what + " state");
                }
            }
        }
    }

    @Test
    void linearAttentionRejectsBadRulesHeadsAndInputs() {
        NDArray x = f32(new int[] {1, 1, 4}, 1, 2, 3, 4);
        NDArray g = f32(new int[] {1, 1, 2}, 0, 0);
        String rule = error("LinearAttention", List.of(x, x, x), 2, intAttr("q_num_heads", 2), intAttr("kv_num_heads", 2), str("update_rule", "lstm"));
        assertTrue(rule.contains("update_rule \"lstm\" is not one of linear, gated, delta, gated_delta"), rule);
        String heads = error("LinearAttention", List.of(x, x, x), 2, intAttr("q_num_heads", 2), intAttr("kv_num_heads", 4), str("update_rule", "linear"));
        assertTrue(heads.contains("q_num_heads (2) must be a positive multiple of kv_num_heads (4)"), heads);
        String missing = error("LinearAttention", List.of(x, x, x), 2, intAttr("q_num_heads", 2), str("update_rule", "linear"));
        assertTrue(missing.contains("q_num_heads and kv_num_heads are required"), missing);
        String forbids = error("LinearAttention", Arrays.asList(x, x, x, null, g), 2, intAttr("q_num_heads", 2), intAttr("kv_num_heads", 2),
                str("update_rule", "linear"));
        assertTrue(forbids.contains("update_rule \"linear\" forbids the decay input (4)"), forbids);
        String requires = error("LinearAttention", Arrays.asList(x, x, x, null, g), 2, intAttr("q_num_heads", 2), intAttr("kv_num_heads", 2));
        assertTrue(requires.contains("update_rule \"gated_delta\" requires the beta input (5)"), requires);
        String decay = error("LinearAttention", Arrays.asList(x, x, x, null, f32(new int[] {1, 1, 3}, 0, 0, 0)), 2,
                intAttr("q_num_heads", 2), intAttr("kv_num_heads", 2), str("update_rule", "gated"));
        assertTrue(decay.contains("decay must be [1, 1, 2] (per head) or [1, 1, 4] (per key dim)"), decay);
    }

    // ---------------------------------------------------------------- FlexAttention

    @Test
    void flexAttentionAppliesScoreAndProbabilityModsInline() {
        // one query against two keys: scores (q·k)·scale = 0 and 0; score_mod adds ln 3 to every score: still uniform;
        // prob_mod halves the probabilities: y = (v0 + v1) / 4
        NDArray q = f32(new int[] {1, 1, 1, 2}, 1, 0), k = f32(new int[] {1, 1, 2, 2}, 0, 1, 0, 2), v = f32(new int[] {1, 1, 2, 1}, 4, 8);
        AttributeProto scoreMod = graphAttr("score_mod", "Add", (float) Math.log(3));
        AttributeProto probMod = graphAttr("prob_mod", "Mul", 0.5f);
        List<NDArray> y = run("FlexAttention", "ai.onnx.preview", List.of(q, k, v), 1, scoreMod, probMod);
        assertArrayEquals(new float[] {3}, y.get(0).floatData(), 1e-5f);
        // without mods, scale 2 on q·k = (0, 2)... keys (1,0),(0,1) against q (1,0): scores 2 and 0
        NDArray k2 = f32(new int[] {1, 1, 2, 2}, 1, 0, 0, 1);
        float p = (float) (Math.exp(2) / (Math.exp(2) + 1));
        List<NDArray> s = run("FlexAttention", "ai.onnx.preview", List.of(q, k2, v), 1, floatAttr("scale", 2));
        assertArrayEquals(new float[] {4 * p + 8 * (1 - p)}, s.get(0).floatData(), 1e-5f);
    }

    @Test
    void flexAttentionSharesEachKvHeadWithConsecutiveQueryHeads() {
        // two query heads, one KV head: both heads read the same single value
        NDArray q = f32(new int[] {1, 2, 1, 1}, 1, -1), k = f32(new int[] {1, 1, 1, 1}, 1), v = f32(new int[] {1, 1, 1, 1}, 7);
        assertArrayEquals(new float[] {7, 7}, run("FlexAttention", "ai.onnx.preview", List.of(q, k, v), 1).get(0).floatData());
    }

    @Test
    void flexAttentionRejectsRankThreeAndUngroupableHeads() {
        NDArray q3 = f32(new int[] {1, 1, 2}, 1, 2);
        String rank = assertThrows(RuntimeException.class, () -> run("FlexAttention", "ai.onnx.preview", List.of(q3, q3, q3), 1)).getMessage();
        assertTrue(rank.contains("Q, K and V must have rank 4"), rank);
        NDArray q = f32(new int[] {1, 3, 1, 1}, 1, 2, 3), kv = f32(new int[] {1, 2, 1, 1}, 1, 2);
        String heads = assertThrows(RuntimeException.class, () -> run("FlexAttention", "ai.onnx.preview", List.of(q, kv, kv), 1)).getMessage();
        assertTrue(heads.contains("3 query heads are not a multiple of 2 key/value heads"), heads);
    }

    @Test
    void flexAttentionRejectsAModOfTwoInputsAndOtherPreviewOpsStayUnsupported() {
        NDArray x = f32(new int[] {1, 1, 1, 1}, 1);
        GraphProto two = GraphProto.newBuilder().addInput(tensor("s", F)).addInput(tensor("t", F)).addOutput(tensor("out", F))
                .addNode(node("Add", "m", List.of("s", "t"), List.of("out"))).build();
        AttributeProto mod = AttributeProto.newBuilder().setName("score_mod").setType(AttributeProto.AttributeType.GRAPH).setG(two).build();
        String m = assertThrows(RuntimeException.class, () -> run("FlexAttention", "ai.onnx.preview", List.of(x, x, x), 1, mod)).getMessage();
        assertTrue(m.contains("score_mod must take one tensor and return one, got 2 inputs and 1 outputs"), m);
        UnsupportedOpException u = assertThrows(UnsupportedOpException.class, () -> run("Frobnicate", "ai.onnx.preview", List.of(x), 1));
        assertEquals("ai.onnx.preview.Frobnicate", u.what());
        assertTrue(u.getMessage().contains("operator Frobnicate of domain 'ai.onnx.preview' is not supported"), u.getMessage());
    }

    /** A graph attribute {@code out = op(in, c)} for a float constant c. */
    private static AttributeProto graphAttr(String name, String op, float c) {
        GraphProto g = GraphProto.newBuilder().addInput(tensor("in", F)).addOutput(tensor("out", F))
                .addInitializer(OnnxTensors.fromNDArray(f32(new int[0], c), "c"))
                .addNode(node(op, "m", List.of("in", "c"), List.of("out"))).build();
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.GRAPH).setG(g).build();
    }

    // ---------------------------------------------------------------- the recurrence, step by step

    /**
     * LinearAttention as the spec writes it, one step at a time in double: decay the state, retrieve
     * with the (erase-gated) key, correct the value, write the outer product, read per query head.
     * Returns the output [B, T, Hq*dv] and the final state [B, Hkv, dk, dv], flattened.
     */
    private static double[][] recurrence(NDArray q, NDArray k, NDArray v, NDArray past, NDArray decay, NDArray beta, NDArray erase,
                                         int hq, int hkv, double scale) {
        int b = q.shape()[0], t = q.shape()[1], dk = q.shape()[2] / hq, dv = v.shape()[2] / hkv, group = hq / hkv;
        double[] out = new double[b * t * hq * dv];
        double[] state = new double[b * hkv * dk * dv];
        for (int bi = 0; bi < b; bi++) {
            for (int h = 0; h < hkv; h++) {
                double[][] s = new double[dk][dv];
                for (int i = 0; i < dk; i++) for (int j = 0; j < dv; j++) s[i][j] = past == null ? 0 : past.getDouble(((bi * hkv + h) * dk + i) * dv + j);
                for (int ti = 0; ti < t; ti++) {
                    double[] kt = new double[dk], ke = new double[dk], vt = new double[dv];
                    for (int i = 0; i < dk; i++) {
                        kt[i] = k.getDouble((bi * t + ti) * hkv * dk + h * dk + i);
                        ke[i] = erase == null ? kt[i] : kt[i] * erase.getDouble((bi * t + ti) * hkv * dk + h * dk + i);
                    }
                    for (int j = 0; j < dv; j++) vt[j] = v.getDouble((bi * t + ti) * hkv * dv + h * dv + j);
                    if (decay != null) {
                        int w = decay.shape()[2];
                        for (int i = 0; i < dk; i++) {
                            double g = w == hkv ? decay.getDouble((bi * t + ti) * w + h) : decay.getDouble((bi * t + ti) * w + h * dk + i);
                            for (int j = 0; j < dv; j++) s[i][j] *= Math.exp(g);
                        }
                    }
                    if (beta != null) {
                        int w = beta.shape()[2];
                        double bt = beta.getDouble((bi * t + ti) * w + (w == 1 ? 0 : h));
                        for (int j = 0; j < dv; j++) {
                            double retrieved = 0;
                            for (int i = 0; i < dk; i++) retrieved += s[i][j] * ke[i];
                            vt[j] = bt * (vt[j] - retrieved);
                        }
                    }
                    for (int i = 0; i < dk; i++) for (int j = 0; j < dv; j++) s[i][j] += kt[i] * vt[j];
                    for (int g = 0; g < group; g++) {
                        int qh = h * group + g;
                        for (int j = 0; j < dv; j++) {
                            double o = 0;
                            for (int i = 0; i < dk; i++) o += q.getDouble((bi * t + ti) * hq * dk + qh * dk + i) * s[i][j];
                            out[(bi * t + ti) * hq * dv + qh * dv + j] = scale * o;
                        }
                    }
                }
                for (int i = 0; i < dk; i++) for (int j = 0; j < dv; j++) state[((bi * hkv + h) * dk + i) * dv + j] = s[i][j];
            }
        }
        return new double[][] {out, state};
    }

    private static NDArray rand(Random r, double scale, int... shape) {
        NDArray a = NDArray.zeros(DType.FLOAT32, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, scale * r.nextGaussian());
        return a;
    }

    private static NDArray negative(NDArray a) {
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, -Math.abs(a.getDouble(i)));
        return a;
    }

    private static NDArray sigmoid(NDArray a) {
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, 1 / (1 + Math.exp(-a.getDouble(i))));
        return a;
    }

    private static void assertClose(double[] want, NDArray got, String what) {
        assertEquals(want.length, got.elementCount(), what + ": element count");
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got.getDouble(i), 1e-4 + 1e-4 * Math.abs(want[i]), what + " [" + i + "]");
        }
    }
}
