package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import java.util.Arrays;
import java.util.List;

/**
 * The state-carrying sequence operators of opset 27 (linear-attention models), in closed form over
 * the static sequence length T rather than as a loop over time (a loop would not compile through the
 * graph executor):
 *
 * <ul>
 *   <li>{@code CausalConvWithState}: a depthwise causal Conv1d whose left padding is the previous
 *       call's last {@code k - 1} inputs ({@code past_state}, zeros when absent); optional bias and
 *       SiLU ("silu"/"swish"); {@code present_state} is the last {@code k - 1} columns of the padded
 *       input.
 *   <li>{@code LinearAttention}: the recurrence {@code S_t = a_t ⊙ S_{t-1} + k_t ⊗ u_t},
 *       {@code o_t = scale · q_tᵀ S_t}, with {@code a_t = exp(g_t)} (gated rules; g per key dim or per
 *       head) and {@code u_t = v_t} (linear, gated) or {@code u_t = β_t (v_t − (a_t ⊙ S_{t-1})ᵀ k_t)}
 *       (delta rules; the retrieval key is {@code erase_gate ⊙ k_t} when that input is given). With
 *       {@code G_t = Σ_{i≤t} g_i}, unrolling gives {@code S_t = e^{G_t} ⊙ S_0 + Σ_{i≤t} e^{G_t − G_i} ⊙ k_i u_iᵀ},
 *       so {@code O = scale · ((Q ⊙ e^G) S_0 + A U)} with {@code A[t,i] = Σ_d q_t[d] k_i[d] e^{G_t[d] − G_i[d]}}
 *       for {@code i ≤ t}. For the delta rules U solves the unit lower-triangular system
 *       {@code (I + diag(β) M) U = diag(β) (V − (K' ⊙ e^G) S_0)}, {@code M[t,i] = Σ_d k'_t[d] k_i[d] e^{G_t[d] − G_i[d]}}
 *       for {@code i < t}; {@code (I + N)⁻¹ = (I − N)(I + N²)(I + N⁴)…} (N is nilpotent, {@code N^T = 0}), so
 *       ⌈log₂ T⌉ matrix squarings replace T sequential steps. Query heads share their KV head's state
 *       in consecutive groups (GQA/MQA). Everything is computed in float32 (as ONNX's function body
 *       does) and cast back: the output to the query's type, the state to the past state's (or the
 *       query's). The decay differences are masked to −∞ above the diagonal before {@code exp}, so no
 *       {@code e^{−G}} can overflow. Cost: the pairwise terms take [B, H, T, T] memory, and
 *       [B, H, T, T, d_k] with a decay per key dimension (no chunking yet: {@code chunk_size} is ignored,
 *       as the spec allows).
 * </ul>
 */
final class RecurrentStateConverters {
    private RecurrentStateConverters() {}

    private static final DType F32 = DType.FLOAT32;

    static void register(OnnxConverters.Builder b) {
        b.add("CausalConvWithState", RecurrentStateConverters::causalConvWithState);
        b.add("LinearAttention", RecurrentStateConverters::linearAttention);
    }

    private static int[] shape(OnnxNode n, int input, String what) {
        TensorType t = n.inputType(input);
        if (!t.isStatic()) throw n.unsupported(what + " has a dynamic shape " + t + "; " + n.opType() + " needs static shapes");
        return t.staticShape();
    }

    // ---------------------------------------------------------------- CausalConvWithState

    private static List<Expr> causalConvWithState(OnnxNode n) {
        String activation = n.attrString("activation", "none");
        boolean silu = switch (activation) {
            case "none" -> false;
            case "silu", "swish" -> true;
            default -> throw n.unsupported("activation \"" + activation + "\" is not one of none, silu, swish");
        };
        int[] xs = shape(n, 0, "input");
        int[] ws = shape(n, 1, "weight");
        if (xs.length != 3) throw n.unsupported("input must be [batch, channels, length], got " + n.inputType(0));
        int batch = xs[0], channels = xs[1], length = xs[2];
        if (ws.length != 3 || ws[0] != channels || ws[1] != 1 || ws[2] < 1) {
            throw n.unsupported("weight must be [channels=" + channels + ", 1, k >= 1], got " + n.inputType(1));
        }
        int k = ws[2];
        DType dt = n.inputType(0).dtype();
        Expr x = n.input(0);
        Expr padded = x;
        if (n.hasInput(3)) {
            int[] ps = shape(n, 3, "past_state");
            if (!Arrays.equals(ps, new int[] {batch, channels, k - 1})) {
                throw n.unsupported("past_state must be [" + batch + ", " + channels + ", " + (k - 1) + "] (batch, channels, k - 1), got " + n.inputType(3));
            }
            if (k > 1) padded = n.call("concatenate", List.of(new Tuple(List.of(n.input(3), x))), "axis", 2L);
        } else if (k > 1) {
            // no history: the first k - 1 positions see zeros
            List<List<Long>> width = List.of(List.of(0L, 0L), List.of(0L, 0L), List.of((long) (k - 1), 0L));
            padded = n.call("nn.pad", List.of(x, NormConverters.scalar(dt, 0)), "pad_width", width, "pad_mode", "constant");
        }
        Expr conv = n.call("nn.conv2d", List.of(
                        n.call("expand_dims", List.of(padded), "axis", 2L, "num_newaxis", 1L),
                        n.call("expand_dims", List.of(n.input(1)), "axis", 2L, "num_newaxis", 1L)),
                "strides", new long[] {1, 1}, "padding", new long[] {0, 0, 0, 0}, "dilation", new long[] {1, 1},
                "groups", (long) channels, "channels", (long) channels, "kernel_size", new long[] {1, k});
        if (n.hasInput(2)) {
            int[] bs = shape(n, 2, "bias");
            if (!Arrays.equals(bs, new int[] {channels})) throw n.unsupported("bias must be [" + channels + "], got " + n.inputType(2));
            conv = n.call("nn.bias_add", List.of(conv, n.input(2)), "axis", 1L);
        }
        Expr y = n.call("squeeze", List.of(conv), "axis", new long[] {2});
        if (silu) y = n.call("multiply", y, n.call("sigmoid", y));
        // the last k - 1 columns of [past | input]: an empty [B, C, 0] when k == 1
        int total = length + k - 1;
        Expr present = n.call("strided_slice", List.of(padded), "begin", new long[] {total - (k - 1)}, "end", new long[] {total},
                "strides", new long[] {1}, "axes", new long[] {2});
        return List.of(y, present);
    }

    // ---------------------------------------------------------------- LinearAttention

    private static List<Expr> linearAttention(OnnxNode n) {
        String rule = n.attrString("update_rule", "gated_delta");
        boolean gating = rule.equals("gated") || rule.equals("gated_delta");
        boolean delta = rule.equals("delta") || rule.equals("gated_delta");
        if (!gating && !delta && !rule.equals("linear")) {
            throw n.unsupported("update_rule \"" + rule + "\" is not one of linear, gated, delta, gated_delta");
        }
        if (!n.hasAttr("q_num_heads") || !n.hasAttr("kv_num_heads")) throw n.unsupported("q_num_heads and kv_num_heads are required");
        long hqAttr = n.attrInt("q_num_heads", 0), hkvAttr = n.attrInt("kv_num_heads", 0);
        if (hqAttr < 1 || hkvAttr < 1 || hqAttr % hkvAttr != 0) {
            throw n.unsupported("q_num_heads (" + hqAttr + ") must be a positive multiple of kv_num_heads (" + hkvAttr + ")");
        }
        int hq = Math.toIntExact(hqAttr), hkv = Math.toIntExact(hkvAttr);
        n.ignore("chunk_size"); // a tuning hint: it does not change the result
        float scaleAttr = n.attrFloat("scale", 0f);
        if (gating != n.hasInput(4)) throw n.unsupported("update_rule \"" + rule + "\" " + (gating ? "requires" : "forbids") + " the decay input (4)");
        if (delta != n.hasInput(5)) throw n.unsupported("update_rule \"" + rule + "\" " + (delta ? "requires" : "forbids") + " the beta input (5)");
        if (n.hasInput(6) && !delta) throw n.unsupported("update_rule \"" + rule + "\" forbids the erase_gate input (6)");

        int[] qs = shape(n, 0, "query"), ks = shape(n, 1, "key"), vs = shape(n, 2, "value");
        if (qs.length != 3 || ks.length != 3 || vs.length != 3) {
            throw n.unsupported("query, key and value must be [batch, T, heads * head_size], got " + n.inputType(0) + ", " + n.inputType(1) + ", " + n.inputType(2));
        }
        int b = qs[0], t = qs[1];
        if (qs[2] % hq != 0) throw n.unsupported("query's last dim " + qs[2] + " is not divisible by q_num_heads " + hq);
        if (vs[2] % hkv != 0) throw n.unsupported("value's last dim " + vs[2] + " is not divisible by kv_num_heads " + hkv);
        int dk = qs[2] / hq, dv = vs[2] / hkv;
        if (ks[0] != b || ks[1] != t || ks[2] != hkv * dk || vs[0] != b || vs[1] != t) {
            throw n.unsupported("key must be [" + b + ", " + t + ", " + (hkv * dk) + "] and value [" + b + ", " + t + ", " + vs[2]
                    + "] (kv_num_heads * head_size), got " + n.inputType(1) + ", " + n.inputType(2));
        }
        DType outType = n.inputType(0).dtype();
        DType stateType = n.hasInput(3) ? n.inputType(3).dtype() : outType;
        double scale = scaleAttr == 0f ? 1 / Math.sqrt(dk) : scaleAttr;

        Expr q = heads(n, f32(n, n.input(0)), b, t, hq, dk);
        Expr k = heads(n, f32(n, n.input(1)), b, t, hkv, dk);
        Expr v = heads(n, f32(n, n.input(2)), b, t, hkv, dv);
        Expr s0 = null;
        if (n.hasInput(3)) {
            int[] ps = shape(n, 3, "past_state");
            if (!Arrays.equals(ps, new int[] {b, hkv, dk, dv})) {
                throw n.unsupported("past_state must be [" + b + ", " + hkv + ", " + dk + ", " + dv + "] (batch, kv_num_heads, d_k, d_v), got " + n.inputType(3));
            }
            s0 = n.bind("past_state", f32(n, n.input(3)));
        }
        // G: cumulative log decay [B, Hkv, T, dk or 1]; eG = exp(G)
        Expr g = null, eg = null;
        if (gating) {
            int[] ds = shape(n, 4, "decay");
            int last = ds.length == 3 ? ds[2] : -1;
            if (ds.length != 3 || ds[0] != b || ds[1] != t || (last != hkv && last != hkv * dk)) {
                throw n.unsupported("decay must be [" + b + ", " + t + ", " + hkv + "] (per head) or [" + b + ", " + t + ", " + (hkv * dk)
                        + "] (per key dim), got " + n.inputType(4));
            }
            Expr decay = heads(n, f32(n, n.input(4)), b, t, hkv, last / hkv);
            g = n.bind("log_decay", n.call("cumsum", List.of(decay), "axis", 2L));
            eg = n.bind("decay", n.call("exp", g));
        }
        // W[.., t, i, d] = e^{G_t[d] - G_i[d]} for i <= t, else 0 (a constant mask without gating)
        Expr wIncl, wStrict;
        if (gating) {
            Expr diff = n.call("subtract", n.call("expand_dims", List.of(g), "axis", 3L, "num_newaxis", 1L),
                    n.call("expand_dims", List.of(g), "axis", 2L, "num_newaxis", 1L));
            Expr masked = n.call("where", OnnxNode.constant(causalMask(DType.BOOL, t, true)), diff, NormConverters.scalar(F32, Double.NEGATIVE_INFINITY));
            wIncl = n.bind("pair_decay", n.call("exp", masked));
            wStrict = n.call("multiply", wIncl, OnnxNode.constant(causalMask(F32, t, false)));
        } else {
            wIncl = OnnxNode.constant(causalMask(F32, t, true));
            wStrict = OnnxNode.constant(causalMask(F32, t, false));
        }

        Expr u = v;
        if (delta) {
            int[] bs = shape(n, 5, "beta");
            if (bs.length != 3 || bs[0] != b || bs[1] != t || (bs[2] != hkv && bs[2] != 1)) {
                throw n.unsupported("beta must be [" + b + ", " + t + ", " + hkv + "] or [" + b + ", " + t + ", 1], got " + n.inputType(5));
            }
            Expr beta = heads(n, f32(n, n.input(5)), b, t, bs[2], 1);
            Expr kErase = k;
            if (n.hasInput(6)) {
                int[] es = shape(n, 6, "erase_gate");
                if (!Arrays.equals(es, new int[] {b, t, hkv * dk})) throw n.unsupported("erase_gate must be [" + b + ", " + t + ", " + (hkv * dk) + "], got " + n.inputType(6));
                kErase = n.call("multiply", heads(n, f32(n, n.input(6)), b, t, hkv, dk), k);
            }
            kErase = n.bind("retrieval_key", kErase);
            Expr rhs = v;
            if (s0 != null) rhs = n.call("subtract", v, matmul(n, gating ? n.call("multiply", kErase, eg) : kErase, s0, false, false));
            rhs = n.call("multiply", beta, rhs);
            Expr nil = n.bind("delta_coupling", n.call("multiply", beta, pairKernel(n, kErase, k, wStrict)));
            u = n.bind("pseudo_value", solveUnitLower(n, nil, rhs, t));
        }

        // the output, per query head, from the state of its KV head
        int group = hq / hkv;
        Expr kq = repeatHeads(n, k, group), uq = repeatHeads(n, u, group);
        Expr wq = gating ? repeatHeads(n, wIncl, group) : wIncl;
        Expr o = matmul(n, pairKernel(n, q, kq, wq), uq, false, false);
        if (s0 != null) {
            Expr qd = gating ? n.call("multiply", q, repeatHeads(n, eg, group)) : q;
            o = n.call("add", o, matmul(n, qd, repeatHeads(n, s0, group), false, false));
        }
        o = n.call("multiply", o, NormConverters.scalar(F32, scale));
        o = n.call("reshape", List.of(n.call("transpose", List.of(o), "axes", new long[] {0, 2, 1, 3})), "newshape", new long[] {b, t, (long) hq * dv});

        // S_T = e^{G_T} ⊙ S_0 + (K ⊙ e^{G_T - G})ᵀ U
        Expr kd = k;
        Expr gLast = null;
        if (gating) {
            gLast = n.call("strided_slice", List.of(g), "begin", new long[] {t - 1}, "end", new long[] {t}, "strides", new long[] {1}, "axes", new long[] {2});
            kd = n.call("multiply", k, n.call("exp", n.call("subtract", gLast, g)));
        }
        Expr state = matmul(n, kd, u, true, false);
        if (s0 != null) {
            Expr s0d = gating ? n.call("multiply", s0, n.call("exp", n.call("transpose", List.of(gLast), "axes", new long[] {0, 1, 3, 2}))) : s0;
            state = n.call("add", state, s0d);
        }
        return List.of(castTo(n, o, outType), castTo(n, state, stateType));
    }

    /** {@code U = (I + N)⁻¹ rhs} for strictly lower-triangular {@code N} [.., T, T]: {@code (I + N^{2^j}) … (I − N) rhs}. */
    private static Expr solveUnitLower(OnnxNode n, Expr nil, Expr rhs, int t) {
        Expr u = n.call("subtract", rhs, matmul(n, nil, rhs, false, false));
        Expr power = nil;
        for (long covered = 2; covered < t; covered *= 2) {
            power = n.bind("coupling_power", matmul(n, power, power, false, false));
            u = n.bind("pseudo_value_partial", n.call("add", u, matmul(n, power, u, false, false)));
        }
        return u;
    }

    /**
     * {@code Σ_d x[.., t, d] · y[.., i, d] · w[.., t, i, d]} as [.., T, T]. A weight that does not vary
     * with d (no decay, or one per head) factors out: {@code (x yᵀ) ⊙ w}, a matmul, without the
     * [.., T, T, d] intermediate that a decay per key dimension needs.
     */
    private static Expr pairKernel(OnnxNode n, Expr x, Expr y, Expr w) {
        int[] ws = ((TensorType) n.typeOf(w)).staticShape();
        if (ws[ws.length - 1] == 1) {
            return n.call("multiply", matmul(n, x, y, false, true), n.call("squeeze", List.of(w), "axis", new long[] {ws.length - 1}));
        }
        Expr xt = n.call("expand_dims", List.of(x), "axis", 3L, "num_newaxis", 1L);
        Expr yi = n.call("expand_dims", List.of(y), "axis", 2L, "num_newaxis", 1L);
        return n.call("sum", List.of(n.call("multiply", n.call("multiply", xt, yi), w)), "axis", new long[] {-1}, "keepdims", false);
    }

    /** 1 (or true) at [t, i, 0] where i <= t ({@code inclusive}) or i < t, as a [T, T, 1] tensor. */
    private static NDArray causalMask(DType dtype, int t, boolean inclusive) {
        NDArray m = NDArray.zeros(dtype, t, t, 1);
        for (int r = 0; r < t; r++) {
            for (int c = 0; c < (inclusive ? r + 1 : r); c++) m.setDouble(r * t + c, 1);
        }
        return m;
    }

    /** [B, T, H*D] -> [B, H, T, D]. */
    private static Expr heads(OnnxNode n, Expr x, int b, int t, int h, int d) {
        Expr r = n.call("reshape", List.of(x), "newshape", new long[] {b, t, h, d});
        return n.call("transpose", List.of(r), "axes", new long[] {0, 2, 1, 3});
    }

    /** Axis 1 (heads) of {@code x} repeated {@code r} times in place (h0, h0, h1, h1, ...); {@code x} itself when r is 1. */
    static Expr repeatHeads(OnnxNode n, Expr x, int r) {
        if (r == 1) return x;
        int[] s = ((TensorType) n.typeOf(x)).staticShape();
        int[] wide = new int[s.length + 1];
        wide[0] = s[0];
        wide[1] = s[1];
        wide[2] = r;
        System.arraycopy(s, 2, wide, 3, s.length - 2);
        int[] merged = s.clone();
        merged[1] = s[1] * r;
        Expr e = n.call("expand_dims", List.of(x), "axis", 2L, "num_newaxis", 1L);
        e = n.call("broadcast_to", List.of(e), "shape", wide);
        return n.call("reshape", List.of(e), "newshape", merged);
    }

    /** {@code a @ b} over the last two axes of 4-D tensors, batched over the first two. */
    private static Expr matmul(OnnxNode n, Expr a, Expr b, boolean transposeA, boolean transposeB) {
        int[] sa = ((TensorType) n.typeOf(a)).staticShape(), sb = ((TensorType) n.typeOf(b)).staticShape();
        long batch = (long) sa[0] * sa[1];
        Expr a3 = n.call("reshape", List.of(a), "newshape", new long[] {batch, sa[2], sa[3]});
        Expr b3 = n.call("reshape", List.of(b), "newshape", new long[] {(long) sb[0] * sb[1], sb[2], sb[3]});
        Expr y = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", transposeA, "transpose_b", transposeB);
        return n.call("reshape", List.of(y), "newshape", new long[] {sa[0], sa[1], transposeA ? sa[3] : sa[2], transposeB ? sb[2] : sb[3]});
    }

    private static Expr f32(OnnxNode n, Expr x) {
        return castTo(n, x, F32);
    }

    private static Expr castTo(OnnxNode n, Expr x, DType to) {
        return ((TensorType) n.typeOf(x)).dtype().equals(to) ? x : n.call("cast", List.of(x), "dtype", to.toString());
    }
}
