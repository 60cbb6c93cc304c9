package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX Attention (opsets 23/24) as Relay: Q, K, V in 4-D [batch, heads, seq, head_size] or 3-D
 * [batch, seq, heads * head_size] form; past key/value concatenated into the present ones; grouped
 * KV heads repeated to the query heads (each KV head serves consecutive query heads); a bias built
 * from the mask (bool: -inf where false; float: added; shorter than the keys: padded with -inf),
 * the causal rule (query i sees key j iff j <= i + past length, or i + nonpad - q_len per batch
 * with an external cache) and nonpad_kv_seqlen; scores {@code (Q·√s)(K·√s)ᵀ}, optional softcap
 * {@code c·tanh(x/c)} before the bias, softmax over the keys, times V. Also RotaryEmbedding and
 * ai.onnx.preview's FlexAttention (its score/probability subgraphs inlined), documented at each.
 */
final class AttentionConverters {
    private AttentionConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Attention", AttentionConverters::attention);
        b.add("RotaryEmbedding", AttentionConverters::rotaryEmbedding);
        b.add("ai.onnx.preview.FlexAttention", AttentionConverters::flexAttention);
    }

    private static int[] shape(OnnxNode n, Expr e, String what) {
        TensorType t = (TensorType) n.typeOf(e);
        if (!t.isStatic()) throw n.unsupported(what + " has a dynamic shape " + t + "; Attention needs static shapes");
        return t.staticShape();
    }

    /** [B, S, H*D] -> [B, H, S, D]. */
    private static Expr heads(OnnxNode n, Expr x, long heads, String what) {
        int[] s = shape(n, x, what);
        if (heads < 1 || s[2] % heads != 0) throw n.unsupported(what + " hidden size " + s[2] + " is not divisible by " + heads + " heads");
        Expr r = n.call("reshape", List.of(x), "newshape", new long[] {s[0], s[1], heads, s[2] / heads});
        return n.call("transpose", List.of(r), "axes", new long[] {0, 2, 1, 3});
    }

    private static Expr scalar(DType dtype, double v) {
        return NormConverters.scalar(dtype, v);
    }

    /** [B, H, M, K] x [B, H, K', N] batched over B*H (transposeB: the second is [B, H, N, K]). */
    private static Expr matmul4(OnnxNode n, Expr a, Expr b, boolean transposeB) {
        int[] sa = shape(n, a, "operand"), sb = shape(n, b, "operand");
        long bh = (long) sa[0] * sa[1];
        Expr a3 = n.call("reshape", List.of(a), "newshape", new long[] {bh, sa[2], sa[3]});
        Expr b3 = n.call("reshape", List.of(b), "newshape", new long[] {bh, sb[2], sb[3]});
        Expr y = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", false, "transpose_b", transposeB);
        return n.call("reshape", List.of(y), "newshape", new long[] {sa[0], sa[1], sa[2], transposeB ? sb[2] : sb[3]});
    }

    private static List<Expr> attention(OnnxNode n) {
        TensorType qt = n.inputType(0);
        DType dt = qt.dtype();
        boolean threeD = qt.rank() == 3;
        if (qt.rank() != 3 && qt.rank() != 4) throw n.unsupported("Q must have rank 3 or 4, got " + qt);
        long qHeadsAttr = n.attrInt("q_num_heads", -1), kvHeadsAttr = n.attrInt("kv_num_heads", -1);
        boolean causal = n.attrInt("is_causal", 0) != 0;
        long mode = n.attrInt("qk_matmul_output_mode", 0);
        double softcap = n.attrFloat("softcap", 0f);
        n.ignore("softmax_precision"); // the softmax runs in the input's precision
        Expr q = n.input(0), k = n.input(1), v = n.input(2);
        if (threeD) {
            if (qHeadsAttr < 1 || kvHeadsAttr < 1) throw n.unsupported("3-D inputs need q_num_heads and kv_num_heads");
            q = heads(n, q, qHeadsAttr, "Q");
            k = heads(n, k, kvHeadsAttr, "K");
            v = heads(n, v, kvHeadsAttr, "V");
        }
        int[] qs = shape(n, q, "Q");
        double scale = n.hasAttr("scale") ? n.attrFloat("scale", 1f) : 1 / Math.sqrt(qs[3]);
        long past = 0;
        if (n.hasInput(4)) {
            past = shape(n, n.input(4), "past_key")[2];
            k = n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(List.of(n.input(4), k))), "axis", 2L);
        }
        if (n.hasInput(5)) v = n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(List.of(n.input(5), v))), "axis", 2L);
        Expr presentK = k, presentV = v;
        int[] ks = shape(n, k, "K");
        int batch = qs[0], qLen = qs[2], kvLen = ks[2];
        Expr bias = null;
        if (n.hasInput(3)) {
            Expr mask = n.input(3);
            TensorType mt = n.inputType(3);
            int[] ms = shape(n, mask, "attn_mask");
            boolean bool = mt.dtype().equals(DType.BOOL);
            if (ms[ms.length - 1] < kvLen) {
                // a mask shorter than the keys hides the keys beyond it
                List<List<Long>> width = new ArrayList<>();
                for (int i = 0; i < ms.length - 1; i++) width.add(List.of(0L, 0L));
                width.add(List.of(0L, (long) (kvLen - ms[ms.length - 1])));
                Expr fill = bool ? OnnxNode.constant(NDArray.scalar(false)) : scalar(mt.dtype(), Double.NEGATIVE_INFINITY);
                mask = n.call("nn.pad", List.of(mask, fill), "pad_width", width, "pad_mode", "constant");
            }
            bias = bool ? n.call("where", mask, scalar(dt, 0), scalar(dt, Double.NEGATIVE_INFINITY)) : mask;
        }
        if (causal) {
            if (n.hasInput(6) && !n.hasInput(4)) {
                // external cache: query i of batch b sees key j iff j <= i + nonpad[b] - q_len
                Expr off = n.call("subtract", n.input(6), ElementwiseConverters.scalarLike(n, 6, qLen));
                off = n.call("reshape", List.of(off), "newshape", new long[] {batch, 1, 1, 1});
                Expr i = OnnxNode.constant(iota(n.inputType(6).dtype(), new int[] {1, 1, qLen, 1}));
                Expr j = OnnxNode.constant(iota(n.inputType(6).dtype(), new int[] {1, 1, 1, kvLen}));
                Expr allowed = n.call("less_equal", j, n.call("add", i, off));
                Expr c = n.call("where", allowed, scalar(dt, 0), scalar(dt, Double.NEGATIVE_INFINITY));
                bias = bias == null ? c : n.call("add", bias, c);
            } else {
                NDArray tri = NDArray.zeros(dt, qLen, kvLen);
                for (int i = 0; i < qLen; i++) for (int j = 0; j < kvLen; j++) if (j > i + past) tri.setDouble(i * kvLen + j, Double.NEGATIVE_INFINITY);
                Expr c = OnnxNode.constant(tri);
                bias = bias == null ? c : n.call("add", bias, c);
            }
        }
        if (n.hasInput(6)) {
            // keys at or beyond nonpad_kv_seqlen[b] are padding
            Expr j = OnnxNode.constant(iota(n.inputType(6).dtype(), new int[] {1, 1, 1, kvLen}));
            Expr lim = n.call("reshape", List.of(n.input(6)), "newshape", new long[] {batch, 1, 1, 1});
            Expr pad = n.call("where", n.call("less", j, lim), scalar(dt, 0), scalar(dt, Double.NEGATIVE_INFINITY));
            bias = bias == null ? pad : n.call("add", bias, pad);
        }
        long qHeads = qs[1], kvHeads = ks[1];
        if (qHeads != kvHeads) {
            if (qHeads % kvHeads != 0) throw n.unsupported(qHeads + " query heads are not a multiple of " + kvHeads + " key/value heads");
            k = repeatHeads(n, k, qHeads / kvHeads);
            v = repeatHeads(n, v, qHeads / kvHeads);
        }
        Expr rootScale = scalar(dt, Math.sqrt(scale));
        Expr qk = matmul4(n, n.call("multiply", q, rootScale), n.call("multiply", k, rootScale), true);
        if (softcap > 0) {
            Expr c = scalar(dt, softcap);
            qk = n.call("multiply", n.call("tanh", n.call("divide", qk, c)), c);
        }
        Expr withBias = bias == null ? qk : n.call("add", qk, bias);
        Expr probs = n.call("nn.softmax", List.of(withBias), "axis", -1L);
        if (bias != null) {
            // a query whose keys are all masked attends to nothing (zeros), rather than softmax's 0/0
            Expr rowMax = n.call("max", List.of(withBias), "axis", new long[] {-1}, "keepdims", true);
            Expr dead = n.call("equal", rowMax, scalar(dt, Double.NEGATIVE_INFINITY));
            probs = n.call("where", dead, scalar(dt, 0), probs);
        }
        Expr y = matmul4(n, probs, v, false);
        if (threeD) {
            int[] ys = shape(n, y, "output");
            y = n.call("reshape", List.of(n.call("transpose", List.of(y), "axes", new long[] {0, 2, 1, 3})),
                    "newshape", new long[] {ys[0], ys[2], (long) ys[1] * ys[3]});
        }
        Expr qkOut = switch ((int) mode) {
            case 0, 1 -> qk;
            case 2 -> withBias;
            case 3 -> probs;
            default -> throw n.unsupported("qk_matmul_output_mode=" + mode + " is not supported");
        };
        List<Expr> outs = new ArrayList<>();
        outs.add(y);
        outs.add(n.hasOutput(1) ? presentK : null);
        outs.add(n.hasOutput(2) ? presentV : null);
        outs.add(n.hasOutput(3) ? qkOut : null);
        return outs;
    }

    /** [B, H, S, D] -> [B, H*r, S, D] with each head repeated r times in place (h0, h0, h1, h1, ...). */
    private static Expr repeatHeads(OnnxNode n, Expr x, long r) {
        if (r == 1) return x;
        int[] s = shape(n, x, "K/V");
        Expr e = n.call("expand_dims", List.of(x), "axis", 2L, "num_newaxis", 1L);
        e = n.call("broadcast_to", List.of(e), "shape", new long[] {s[0], s[1], r, s[2], s[3]});
        return n.call("reshape", List.of(e), "newshape", new long[] {s[0], s[1] * r, s[2], s[3]});
    }

    /**
     * FlexAttention (ai.onnx.preview, version 1): rank-4 Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev];
     * each K/V head serves {@code Hq / Hkv} consecutive query heads. As ONNX's function body: √scale
     * (scale defaults to 1/√E) multiplies Q and K in the input type, the scores go to the softmax type
     * (float32, float64 for double inputs), the {@code score_mod} subgraph (one tensor in, one out)
     * rewrites them, softmax over the keys, the {@code prob_mod} subgraph rewrites the probabilities,
     * times V (in the softmax type), cast back. The subgraphs are inlined as nested blocks.
     */
    private static List<Expr> flexAttention(OnnxNode n) {
        TensorType qt = n.inputType(0), kt = n.inputType(1), vt = n.inputType(2);
        if (qt.rank() != 4 || kt.rank() != 4 || vt.rank() != 4) {
            throw n.unsupported("Q, K and V must have rank 4 (batch, heads, sequence, head_size), got " + qt + ", " + kt + ", " + vt);
        }
        DType dt = qt.dtype();
        if (!dt.isFloat() || !kt.dtype().equals(dt) || !vt.dtype().equals(dt)) {
            throw n.unsupported("Q, K and V must share one floating-point type, got " + qt + ", " + kt + ", " + vt);
        }
        int[] qs = shape(n, n.input(0), "Q"), ks = shape(n, n.input(1), "K"), vs = shape(n, n.input(2), "V");
        if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2]) {
            throw n.unsupported("K must be [" + qs[0] + ", kv_heads, S, " + qs[3] + "] and V [" + qs[0] + ", kv_heads, S, Ev] with K's heads and S, got "
                    + kt + ", " + vt);
        }
        if (qs[1] % ks[1] != 0) throw n.unsupported(qs[1] + " query heads are not a multiple of " + ks[1] + " key/value heads");
        DType softmaxType = dt.equals(DType.FLOAT64) ? DType.FLOAT64 : DType.FLOAT32;
        // the function body computes the scale and its square root in float32
        float scale = n.hasAttr("scale") ? n.attrFloat("scale", 1f) : (float) (1 / Math.sqrt(qs[3]));
        Expr root = scalar(dt, (float) Math.sqrt(scale));
        Expr k = repeatHeads(n, n.input(1), qs[1] / ks[1]), v = repeatHeads(n, n.input(2), qs[1] / ks[1]);
        Expr scores = toType(n, matmul4(n, n.call("multiply", n.input(0), root), n.call("multiply", k, root), true), softmaxType);
        if (n.hasAttr("score_mod")) scores = inlineMod(n, "score_mod", scores);
        Expr probs = n.call("nn.softmax", List.of(scores), "axis", -1L);
        if (n.hasAttr("prob_mod")) probs = inlineMod(n, "prob_mod", probs);
        return List.of(toType(n, matmul4(n, probs, toType(n, v, softmaxType), false), dt));
    }

    /** Graph attribute {@code attr} (one tensor in, the same type out) applied to {@code x}, its nodes inlined. */
    private static Expr inlineMod(OnnxNode n, String attr, Expr x) {
        dev.relayfarm.frontend.proto.Onnx.GraphProto g = n.attrGraph(attr);
        if (g.getInputCount() != 1 || g.getOutputCount() != 1) {
            throw n.unsupported(attr + " must take one tensor and return one, got " + g.getInputCount() + " inputs and " + g.getOutputCount() + " outputs");
        }
        Type in = n.typeOf(x);
        OnnxImporter.Subgraph sub = n.convertSubgraph(g, List.of(n.bind(attr + "_in", x)));
        Expr out = sub.wrap(sub.outputs().getFirst());
        Type got = n.typeOf(out);
        if (!got.equals(in)) throw n.unsupported(attr + " must return its input's type " + in + ", got " + got);
        return n.bind(attr + "_out", out);
    }

    private static Expr toType(OnnxNode n, Expr x, DType to) {
        return ((TensorType) n.typeOf(x)).dtype().equals(to) ? x : n.call("cast", List.of(x), "dtype", to.toString());
    }

    /** 0, 1, 2, ... laid out along the one non-unit axis of {@code shape}. */
    private static NDArray iota(DType dtype, int[] shape) {
        NDArray a = NDArray.zeros(dtype, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setLong(i, i);
        return a;
    }

    /**
     * RotaryEmbedding (opset 23) composed from existing ops, since X's shape is known at import:
     * X is [B, H, S, D], or [B, S, H*D] reshaped to [B, S, H, D] by num_heads; the caches are
     * gathered by position_ids ([max_pos, r/2] -> [B, S, r/2]; without position_ids they are
     * already [B, S, r/2]), cut to r/2 and given a unit head axis. The first r = rotary_embedding_dim
     * (0: D) features are split into halves (or even/odd features when interleaved), x1 and x2, and
     * become {@code cos·x1 - sin·x2} and {@code sin·x1 + cos·x2}, re-joined the same way; the
     * remaining D - r features pass through.
     */
    private static List<Expr> rotaryEmbedding(OnnxNode n) {
        TensorType xt = n.inputType(0);
        if (!xt.isStatic()) throw n.unsupported("X has a dynamic shape " + xt + "; RotaryEmbedding needs a static shape");
        int[] s = xt.staticShape();
        Expr x = n.input(0);
        long numHeads = n.attrInt("num_heads", 0);
        int headAxis;
        int[] work;
        switch (s.length) {
            case 4 -> {
                headAxis = 1;
                work = s;
            }
            case 3 -> {
                if (numHeads < 1 || s[2] % numHeads != 0) {
                    throw n.unsupported("3-D X " + xt + " needs num_heads dividing its hidden size, got num_heads=" + numHeads);
                }
                work = new int[] {s[0], s[1], (int) numHeads, s[2] / (int) numHeads};
                x = n.call("reshape", List.of(x), "newshape", longs(work));
                headAxis = 2;
            }
            default -> throw n.unsupported("X must be 3-D or 4-D, got " + xt);
        }
        int d = work[3];
        long rotAttr = n.attrInt("rotary_embedding_dim", 0);
        int r = rotAttr == 0 ? d : (int) rotAttr;
        if (r < 2 || r > d || r % 2 != 0) throw n.unsupported("rotary_embedding_dim " + r + " must be even and in [2, head_size " + d + "]");
        int half = r / 2;
        Expr cos = rotaryCache(n, 1, half, headAxis);
        Expr sin = rotaryCache(n, 2, half, headAxis);
        boolean interleaved = n.attrInt("interleaved", 0) != 0;
        Expr x1 = interleaved ? lastAxisSlice(n, x, 0, r, 2) : lastAxisSlice(n, x, 0, half, 1);
        Expr x2 = interleaved ? lastAxisSlice(n, x, 1, r, 2) : lastAxisSlice(n, x, half, r, 1);
        Expr real = n.call("subtract", n.call("multiply", cos, x1), n.call("multiply", sin, x2));
        Expr imag = n.call("add", n.call("multiply", sin, x1), n.call("multiply", cos, x2));
        Expr rotated;
        if (interleaved) {
            // [.., r/2] pairs -> [.., r/2, 2] -> [.., r]: real and imag alternate again
            Expr pairs = n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(List.of(
                    n.call("expand_dims", List.of(real), "axis", 4L, "num_newaxis", 1L),
                    n.call("expand_dims", List.of(imag), "axis", 4L, "num_newaxis", 1L)))), "axis", 4L);
            rotated = n.call("reshape", List.of(pairs), "newshape", new long[] {work[0], work[1], work[2], r});
        } else {
            rotated = n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(List.of(real, imag))), "axis", 3L);
        }
        Expr y = r == d ? rotated
                : n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(List.of(rotated, lastAxisSlice(n, x, r, d, 1)))), "axis", 3L);
        if (s.length == 3) y = n.call("reshape", List.of(y), "newshape", longs(s));
        return List.of(y);
    }

    /** cos or sin cache (input i) as [B, S, r/2] broadcastable against the working [.., r/2] slices. */
    private static Expr rotaryCache(OnnxNode n, int i, int half, int headAxis) {
        Expr c = n.input(i);
        int rank = n.inputRank(i);
        if (n.hasInput(3)) {
            if (rank != 2) throw n.unsupported("with position_ids the caches must be [max_position, rotary_dim / 2], got " + n.inputType(i));
            c = n.call("take", List.of(c, n.input(3)), "axis", 0L);
        } else if (rank != 3) {
            throw n.unsupported("without position_ids the caches must be [batch, sequence, rotary_dim / 2], got " + n.inputType(i));
        }
        c = n.call("strided_slice", List.of(c), "begin", new long[] {0}, "end", new long[] {half}, "axes", new long[] {2});
        return n.call("expand_dims", List.of(c), "axis", (long) headAxis, "num_newaxis", 1L);
    }

    private static Expr lastAxisSlice(OnnxNode n, Expr x, long begin, long end, long step) {
        return n.call("strided_slice", List.of(x), "begin", new long[] {begin}, "end", new long[] {end}, "strides", new long[] {step},
                "axes", new long[] {3});
    }

    private static long[] longs(int[] v) {
        long[] r = new long[v.length];
        for (int i = 0; i < v.length; i++) r[i] = v[i];
        return r;
    }
}
