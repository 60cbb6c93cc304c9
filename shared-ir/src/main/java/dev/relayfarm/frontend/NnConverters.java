package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** ONNX neural-network operators: Conv, Gemm, MatMul, pooling, normalization, softmax. */
final class NnConverters {
    private NnConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Conv", NnConverters::conv);
        b.add("Gemm", NnConverters::gemm);
        b.add("MatMul", NnConverters::matmul);
        b.add("MaxPool", n -> pool(n, "nn.max_pool2d"));
        b.add("LpPool", NnConverters::lpPool);
        b.add("GlobalLpPool", NnConverters::globalLpPool);
        b.add("ConvTranspose", NnConverters::convTranspose);
        b.add("AveragePool", n -> pool(n, "nn.avg_pool2d"));
        b.add("GlobalAveragePool", n -> List.of(globalPool(n, "nn.global_avg_pool2d", "mean")));
        b.add("GlobalMaxPool", n -> List.of(globalPool(n, "nn.global_max_pool2d", "max")));
        b.add("BatchNormalization", NnConverters::batchNorm);
        b.add("Softmax", n -> softmax(n, "nn.softmax"));
        b.add("LogSoftmax", n -> softmax(n, "nn.log_softmax"));
        b.add("Dropout", NnConverters::dropout);
        b.add("PRelu", n -> {
            // ONNX PRelu broadcasts the slope; the common per-channel case maps to nn.prelu.
            TensorType slope = n.inputType(1);
            TensorType x = n.inputType(0);
            if (slope.rank() >= 1 && x.rank() >= 2 && slope.shape().stream().skip(1).allMatch(d -> d.equals(Dim.of(1)))
                    && (slope.rank() == x.rank() - 1)) {
                Expr alpha = n.call("reshape", List.of(n.input(1)), "newshape", new long[] {-1});
                return List.of(n.call("nn.prelu", List.of(n.input(0), alpha), "axis", 1L));
            }
            // General broadcast: where(x < 0, slope * x, x).
            Expr x0 = n.input(0);
            Expr zero = ElementwiseConverters.scalarLike(n, 0, 0);
            return List.of(n.call("where", n.call("less", x0, zero), n.call("multiply", n.input(1), x0), x0));
        });
        b.add("LRN", n -> {
            long size = n.attrInt("size", -1);
            if (size < 1) throw n.unsupported("attribute 'size' is required");
            return List.of(n.call("nn.lrn", List.of(n.input(0)), "size", size, "axis", 1L,
                    "alpha", (double) n.attrFloat("alpha", 1e-4f), "beta", (double) n.attrFloat("beta", 0.75f),
                    "bias", (double) n.attrFloat("bias", 1f)));
        });
    }

    /** NCHW uses the 2-D global pool; other spatial ranks reduce over every axis after the channels. */
    private static Expr globalPool(OnnxNode n, String op2d, String reduce) {
        int rank = n.inputRank(0);
        if (rank == 4) return n.call(op2d, n.input(0));
        if (rank < 3) throw n.unsupported(n.opType() + " on rank-" + rank + " input (needs N, C and spatial axes)");
        long[] axes = new long[rank - 2];
        for (int i = 0; i < axes.length; i++) axes[i] = i + 2;
        return n.call(reduce, List.of(n.input(0)), "axis", axes, "keepdims", true);
    }

    /**
     * The window of a 1-D or 2-D convolution or pooling, as 2-D attributes: a 1-D operator runs as an
     * image of height 1 (its input gets an axis 2 and its output loses it again), which is exact.
     */
    record Window(boolean lifted, long[] kernel, long[] strides, long[] dilations, long[] pads) {
        Expr in(OnnxNode n, Expr x) {
            return lifted ? n.call("expand_dims", List.of(x), "axis", 2L, "num_newaxis", 1L) : x;
        }

        Expr out(OnnxNode n, Expr y) {
            return lifted ? n.call("squeeze", List.of(y), "axis", new long[] {2}) : y;
        }
    }

    /** Spatial rank of input 0 (1 or 2); 3-D and higher are named as unsupported. */
    private static int spatialRank(OnnxNode n) {
        return spatialRank(n, 2);
    }

    /** Spatial rank of input 0, from 1 up to {@code most}; higher ranks are named as unsupported. */
    private static int spatialRank(OnnxNode n, int most) {
        int sp = n.inputRank(0) - 2;
        if (sp < 1 || sp > most) {
            throw n.unsupported(n.opType() + " on rank-" + n.inputRank(0) + " input (only " + (most == 2 ? "1-D and 2-D" : "1-D to " + most + "-D")
                    + " windows are supported)");
        }
        return sp;
    }

    private static Window window(OnnxNode n, long[] kernel, boolean transposed) {
        return window(n, kernel, transposed, spatialRank(n));
    }

    /**
     * 1-D windows are lifted to 2-D (a unit height); 2-D and 3-D ones map directly, as ONNX's pads order
     * {begin..., end...} is Relay's for both.
     */
    private static Window window(OnnxNode n, long[] kernel, boolean transposed, int sp) {
        if (kernel.length != sp) throw n.unsupported("kernel_shape has " + kernel.length + " values for " + sp + " spatial axes");
        long[] strides = spatialInts(n, "strides", sp, 1);
        long[] dilations = spatialInts(n, "dilations", sp, 1);
        long[] pads = transposed ? null : pads(n, sp, kernel, strides, dilations);
        if (sp >= 2) return new Window(false, kernel, strides, dilations, pads);
        return new Window(true, new long[] {1, kernel[0]}, new long[] {1, strides[0]}, new long[] {1, dilations[0]},
                pads == null ? null : new long[] {0, pads[0], 0, pads[1]});
    }

    private static long[] spatialInts(OnnxNode n, String name, int sp, long dflt) {
        long[] v = n.attrInts(name);
        if (v == null) {
            v = new long[sp];
            Arrays.fill(v, dflt);
        }
        if (v.length != sp) throw n.unsupported("attribute '" + name + "' has " + v.length + " values for " + sp + " spatial axes");
        return v;
    }

    private static long spatialDim(OnnxNode n, int i, String why) {
        Dim d = n.inputType(0).shape().get(2 + i);
        if (!d.isStatic()) throw n.unsupported(why + " needs a static spatial size, got " + d);
        return d.value();
    }

    /** Explicit ONNX-order padding [begin..., end...], resolving auto_pad from static input dims. */
    private static long[] pads(OnnxNode n, int sp, long[] kernel, long[] strides, long[] dilations) {
        String autoPad = n.attrString("auto_pad", "NOTSET");
        long[] pads = n.attrInts("pads");
        switch (autoPad) {
            case "NOTSET" -> {
                if (pads == null) return new long[2 * sp];
                if (pads.length != 2 * sp) throw n.unsupported("pads has " + pads.length + " values for " + sp + " spatial axes");
                return pads;
            }
            case "VALID" -> {
                return new long[2 * sp];
            }
            case "SAME_UPPER", "SAME_LOWER" -> {
                long[] out = new long[2 * sp];
                for (int i = 0; i < sp; i++) {
                    long in = spatialDim(n, i, "auto_pad=" + autoPad);
                    long outSize = (in + strides[i] - 1) / strides[i];
                    long total = Math.max(0, (outSize - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
                    long small = total / 2;
                    long big = total - small;
                    out[i] = autoPad.equals("SAME_UPPER") ? small : big;
                    out[i + sp] = autoPad.equals("SAME_UPPER") ? big : small;
                }
                return out;
            }
            default -> throw n.unsupported("auto_pad=" + autoPad + " is not supported");
        }
    }

    private static List<Expr> conv(OnnxNode n) {
        TensorType w = n.inputType(1);
        int sp = spatialRank(n);
        if (w.rank() != sp + 2) throw n.unsupported("weight of rank " + w.rank() + " for a " + sp + "-D convolution");
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) kernel = w.shape().stream().skip(2).mapToLong(Dim::value).toArray();
        Window win = window(n, kernel, false);
        long group = n.attrInt("group", 1);
        Expr weight = win.in(n, n.input(1));
        Expr out = n.call("nn.conv2d", List.of(win.in(n, n.input(0)), weight), "strides", win.strides(), "padding", win.pads(),
                "dilation", win.dilations(), "groups", group, "channels", w.shape().get(0).value(), "kernel_size", win.kernel());
        if (n.hasInput(2)) out = n.call("nn.bias_add", List.of(out, n.input(2)), "axis", 1L);
        return List.of(win.out(n, out));
    }

    /**
     * ConvTranspose: out = stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pads. An
     * output_shape (or SAME auto_pad) fixes the total padding; where it is negative the output is
     * larger than the transposed convolution reaches, and those positions are zero before the bias.
     */
    private static List<Expr> convTranspose(OnnxNode n) {
        TensorType w = n.inputType(1);
        int sp = spatialRank(n, 3);
        if (w.rank() != sp + 2) throw n.unsupported("weight of rank " + w.rank() + " for a " + sp + "-D transposed convolution");
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) kernel = w.shape().stream().skip(2).mapToLong(Dim::value).toArray();
        long[] strides = spatialInts(n, "strides", sp, 1);
        long[] dilations = spatialInts(n, "dilations", sp, 1);
        long[] outputPadding = spatialInts(n, "output_padding", sp, 0);
        long[] outputShape = n.attrInts("output_shape");
        String autoPad = n.attrString("auto_pad", "NOTSET");
        long[] explicit = n.attrInts("pads");
        long group = n.attrInt("group", 1);
        long[] pads = new long[2 * sp];
        if (outputShape != null || autoPad.startsWith("SAME")) {
            if (outputShape != null && outputShape.length == sp + 2) outputShape = Arrays.copyOfRange(outputShape, 2, sp + 2);
            if (outputShape != null && outputShape.length != sp) throw n.unsupported("output_shape has " + outputShape.length + " values for " + sp + " spatial axes");
            for (int i = 0; i < sp; i++) {
                long in = spatialDim(n, i, "output_shape/auto_pad");
                long target = outputShape != null ? outputShape[i] : in * strides[i];
                long total = strides[i] * (in - 1) + outputPadding[i] + (kernel[i] - 1) * dilations[i] + 1 - target;
                boolean upper = autoPad.equals("SAME_UPPER");
                // floor division: a negative total (output larger than reached) grows the end, as the reference does
                long half = Math.floorDiv(total, 2);
                pads[i] = upper ? half : total - half;
                pads[i + sp] = upper ? total - half : half;
            }
        } else if (!autoPad.equals("NOTSET") && !autoPad.equals("VALID")) {
            throw n.unsupported("auto_pad=" + autoPad + " is not supported");
        } else if (explicit != null && autoPad.equals("NOTSET")) {
            if (explicit.length != 2 * sp) throw n.unsupported("pads has " + explicit.length + " values for " + sp + " spatial axes");
            pads = explicit;
        }
        // Negative padding (output_shape beyond the reach of the kernel) becomes zero padding of the result.
        long[] cut = new long[2 * sp], grow = new long[2 * sp];
        for (int i = 0; i < 2 * sp; i++) {
            cut[i] = Math.max(0, pads[i]);
            grow[i] = Math.max(0, -pads[i]);
        }
        // nn.conv2d_transpose takes output_padding below the stride; larger growth goes to the zero padding too.
        long[] opad = new long[sp];
        for (int i = 0; i < sp; i++) {
            long limit = Math.max(strides[i], dilations[i]) - 1;
            opad[i] = Math.min(outputPadding[i], limit);
            grow[i + sp] += outputPadding[i] - opad[i];
        }
        long channels = w.shape().get(1).value() * group;
        boolean lift = sp == 1;
        Expr x = lift ? n.call("expand_dims", List.of(n.input(0)), "axis", 2L, "num_newaxis", 1L) : n.input(0);
        Expr weight = lift ? n.call("expand_dims", List.of(n.input(1)), "axis", 2L, "num_newaxis", 1L) : n.input(1);
        long[] k2 = lift ? new long[] {1, kernel[0]} : kernel;
        long[] s2 = lift ? new long[] {1, strides[0]} : strides;
        long[] d2 = lift ? new long[] {1, dilations[0]} : dilations;
        long[] p2 = lift ? new long[] {0, cut[0], 0, cut[1]} : cut;
        long[] o2 = lift ? new long[] {0, opad[0]} : opad;
        // 3-D maps to nn.conv3d_transpose: ONNX's pads order {begin..., end...} is its padding order
        Expr out = n.call(sp == 3 ? "nn.conv3d_transpose" : "nn.conv2d_transpose", List.of(x, weight), "strides", s2, "padding", p2,
                "dilation", d2, "groups", group, "channels", channels, "kernel_size", k2, "output_padding", o2);
        if (Arrays.stream(grow).anyMatch(g -> g != 0)) {
            List<List<Long>> width = new ArrayList<>(List.of(List.of(0L, 0L), List.of(0L, 0L)));
            if (lift) width.add(List.of(0L, 0L));
            for (int i = 0; i < sp; i++) width.add(List.of(grow[i], grow[i + sp]));
            out = n.call("nn.pad", List.of(out, ElementwiseConverters.scalarLike(n, 0, 0)), "pad_width", width, "pad_mode", "constant");
        }
        if (n.hasInput(2)) out = n.call("nn.bias_add", List.of(out, n.input(2)), "axis", 1L);
        return List.of(lift ? n.call("squeeze", List.of(out), "axis", new long[] {2}) : out);
    }

    private static List<Expr> gemm(OnnxNode n) {
        Expr a = n.input(0);
        Expr b = n.input(1);
        double alpha = n.attrFloat("alpha", 1f);
        double beta = n.attrFloat("beta", 1f);
        n.ignore("broadcast"); // opset < 7: C always broadcasts in our conversion
        if (n.attrInt("transA", 0) != 0) a = n.call("transpose", List.of(a), "axes", new long[] {1, 0});
        // nn.dense computes data · weightᵀ, so an untransposed B [K, N] is transposed to [N, K].
        if (n.attrInt("transB", 0) == 0) b = n.call("transpose", List.of(b), "axes", new long[] {1, 0});
        Expr y = n.call("nn.dense", a, b);
        if (alpha != 1.0) y = n.call("multiply", y, ElementwiseConverters.scalarLike(n, 0, alpha));
        if (n.hasInput(2)) {
            Expr c = n.input(2);
            if (beta != 1.0) c = n.call("multiply", c, ElementwiseConverters.scalarLike(n, 2, beta));
            y = n.call("add", y, c);
        }
        return List.of(y);
    }

    /** numpy matmul: 1-D operands are promoted and the added dim removed; batch dims broadcast. */
    private static List<Expr> matmul(OnnxNode n) {
        TensorType ta = n.inputType(0);
        TensorType tb = n.inputType(1);
        Expr a = n.input(0);
        Expr b = n.input(1);
        if (ta.rank() == 2 && tb.rank() == 2) return List.of(n.call("nn.matmul", a, b));
        boolean vecA = ta.rank() == 1, vecB = tb.rank() == 1;
        if (vecA) a = n.call("expand_dims", List.of(a), "axis", 0L, "num_newaxis", 1L);
        if (vecB) b = n.call("expand_dims", List.of(b), "axis", 1L, "num_newaxis", 1L);
        TensorType ea = (TensorType) n.typeOf(a);
        TensorType eb = (TensorType) n.typeOf(b);
        Expr y;
        if (ea.rank() == 2 && eb.rank() == 2) {
            y = n.call("nn.matmul", a, b);
        } else {
            List<Dim> batchA = ea.shape().subList(0, ea.rank() - 2);
            List<Dim> batchB = eb.shape().subList(0, eb.rank() - 2);
            List<Dim> batch = broadcastDims(n, batchA, batchB);
            if (!batch.stream().allMatch(Dim::isStatic) || !ea.isStatic() || !eb.isStatic()) {
                y = dynamicMatmul(n, a, b, ea, eb, batch);
                if (vecA) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 2});
                if (vecB) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 1});
                return List.of(y);
            }
            long bsz = batch.stream().mapToLong(Dim::value).reduce(1, (x, z) -> x * z);
            long m = ea.shape().get(ea.rank() - 2).value(), k = ea.shape().get(ea.rank() - 1).value();
            long nn = eb.shape().get(eb.rank() - 1).value();
            Expr a3 = n.call("reshape", List.of(broadcastTo(n, a, batch, ea)), "newshape", new long[] {bsz, m, k});
            Expr b3 = n.call("reshape", List.of(broadcastTo(n, b, batch, eb)), "newshape", new long[] {bsz, k, nn});
            Expr y3 = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", false, "transpose_b", false);
            long[] outShape = new long[batch.size() + 2];
            for (int i = 0; i < batch.size(); i++) outShape[i] = batch.get(i).value();
            outShape[batch.size()] = m;
            outShape[batch.size() + 1] = nn;
            y = n.call("reshape", List.of(y3), "newshape", outShape);
        }
        if (vecA) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 2});
        if (vecB) y = n.call("squeeze", List.of(y), "axis", new long[] {((TensorType) n.typeOf(y)).rank() - 1});
        return List.of(y);
    }

    /**
     * MatMul with {@code ?} dims (static shapes keep the reshape-to-3-D form above, unchanged). A 2-D right side
     * (weights) is {@code nn.matmul} on the N-D left side as it is, whatever its dims. Otherwise the batch dims must be
     * static and equal on both sides (no broadcast), one or two of them: two are merged with reshape's {@code -3} and
     * split back with {@code -4}, the matrix dims copied with {@code 0}, so M, K and N may all stay {@code ?}
     * (attention's {@code [1, h, ?, d] x [1, h, d, ?]} and {@code [1, h, ?, ?] x [1, h, ?, d]}).
     */
    private static Expr dynamicMatmul(OnnxNode n, Expr a, Expr b, TensorType ea, TensorType eb, List<Dim> batch) {
        if (eb.rank() == 2) return n.call("nn.matmul", a, b);
        String what = "batched MatMul with dynamic shapes " + ea + " x " + eb;
        List<Dim> batchA = ea.shape().subList(0, ea.rank() - 2), batchB = eb.shape().subList(0, eb.rank() - 2);
        if (!batch.stream().allMatch(Dim::isStatic) || !batchA.equals(batch) || !batchB.equals(batch)) {
            throw n.unsupported(what + " is not supported: the batch dims must be static and equal on both sides");
        }
        if (batch.size() > 2) throw n.unsupported(what + " is not supported: more than two batch dims");
        if (batch.size() == 1) return n.call("nn.batch_matmul", List.of(a, b), "transpose_a", false, "transpose_b", false);
        Expr a3 = n.call("reshape", List.of(a), "newshape", new long[] {-3, 0, 0});
        Expr b3 = n.call("reshape", List.of(b), "newshape", new long[] {-3, 0, 0});
        Expr y3 = n.call("nn.batch_matmul", List.of(a3, b3), "transpose_a", false, "transpose_b", false);
        return n.call("reshape", List.of(y3), "newshape", new long[] {-4, batch.get(0).value(), batch.get(1).value(), 0, 0});
    }

    private static Expr broadcastTo(OnnxNode n, Expr x, List<Dim> batch, TensorType t) {
        List<Dim> target = new ArrayList<>(batch);
        target.addAll(t.shape().subList(t.rank() - 2, t.rank()));
        if (target.equals(t.shape())) return x;
        return n.call("broadcast_to", List.of(x), "shape", target.stream().mapToLong(Dim::value).toArray());
    }

    static List<Dim> broadcastDims(OnnxNode n, List<Dim> a, List<Dim> b) {
        int rank = Math.max(a.size(), b.size());
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < rank; i++) {
            Dim da = i < rank - a.size() ? Dim.of(1) : a.get(i - (rank - a.size()));
            Dim db = i < rank - b.size() ? Dim.of(1) : b.get(i - (rank - b.size()));
            if (da.equals(Dim.of(1))) out.add(db);
            else if (db.equals(Dim.of(1)) || da.equals(db)) out.add(da);
            else throw n.unsupported("shapes " + a + " and " + b + " do not broadcast");
        }
        return out;
    }

    private static List<Expr> pool(OnnxNode n, String op2d) {
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) throw n.unsupported("attribute 'kernel_shape' is required");
        int sp = spatialRank(n, 3);
        Window win = window(n, kernel, false, sp);
        String op = sp == 3 ? op2d.replace("2d", "3d") : op2d;
        boolean ceil = n.attrInt("ceil_mode", 0) != 0;
        List<Object> kv = new ArrayList<>(List.of("pool_size", win.kernel(), "strides", win.strides(), "dilation", win.dilations(),
                "padding", win.pads(), "ceil_mode", ceil));
        if (n.hasOutput(1)) {
            // Indices: flat positions in the input; a lifted 1-D input has height 1, so its indices are unchanged
            if (sp == 3) throw n.unsupported("the Indices output of a 3-D MaxPool is not supported");
            kv.add("storage_order");
            kv.add((long) n.attrInt("storage_order", 0));
            Expr both = n.call("nn.max_pool2d_with_argmax", List.of(win.in(n, n.input(0))), kv.toArray());
            return List.of(win.out(n, new TupleGetItem(both, 0)), win.out(n, new TupleGetItem(both, 1)));
        }
        n.ignore("storage_order"); // only orders the Indices output
        if (!op.startsWith("nn.max_pool")) {
            kv.add("count_include_pad");
            kv.add(n.attrInt("count_include_pad", 0) != 0);
        }
        return List.of(win.out(n, n.call(op, List.of(win.in(n, n.input(0))), kv.toArray())));
    }

    /** LpPool: (sum over the window of |x|^p)^(1/p); padding contributes zeros, so it is an average times the window size. */
    private static List<Expr> lpPool(OnnxNode n) {
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) throw n.unsupported("attribute 'kernel_shape' is required");
        int sp = spatialRank(n, 3);
        Window win = window(n, kernel, false, sp);
        boolean ceil = n.attrInt("ceil_mode", 0) != 0;
        double p = n.attrInt("p", 2);
        Expr x = win.in(n, n.input(0));
        Expr powed = n.call("power", n.call("abs", x), ElementwiseConverters.scalarLike(n, 0, p));
        Expr avg = n.call(sp == 3 ? "nn.avg_pool3d" : "nn.avg_pool2d", List.of(powed), "pool_size", win.kernel(), "strides", win.strides(), "dilation", win.dilations(),
                "padding", win.pads(), "ceil_mode", ceil, "count_include_pad", true);
        long area = Arrays.stream(win.kernel()).reduce(1, (x1, x2) -> x1 * x2);
        Expr sum = n.call("multiply", avg, ElementwiseConverters.scalarLike(n, 0, area));
        return List.of(win.out(n, n.call("power", sum, ElementwiseConverters.scalarLike(n, 0, 1.0 / p))));
    }

    private static List<Expr> globalLpPool(OnnxNode n) {
        int rank = n.inputRank(0);
        double p = n.attrInt("p", 2);
        long[] axes = new long[rank - 2];
        for (int i = 0; i < axes.length; i++) axes[i] = i + 2;
        Expr powed = n.call("power", n.call("abs", n.input(0)), ElementwiseConverters.scalarLike(n, 0, p));
        Expr sum = n.call("sum", List.of(powed), "axis", axes, "keepdims", true);
        return List.of(n.call("power", sum, ElementwiseConverters.scalarLike(n, 0, 1.0 / p)));
    }

    private static List<Expr> batchNorm(OnnxNode n) {
        if (n.opset() < 9) n.expectInt("spatial", 1);
        if (n.opset() >= 14 && n.attrInt("training_mode", 0) != 0) return batchNormTraining(n);
        n.expectInt("training_mode", 0);
        n.ignore("momentum", "is_test", "consumed_inputs"); // training-only / legacy hints
        if (n.hasOutput(1) || n.hasOutput(2)) throw n.unsupported("training outputs (running mean/var) are not supported");
        Expr bn = n.call("nn.batch_norm", List.of(n.input(0), n.input(1), n.input(2), n.input(3), n.input(4)),
                "axis", 1L, "epsilon", (double) n.attrFloat("epsilon", 1e-5f));
        return List.of(new TupleGetItem(bn, 0));
    }

    /**
     * BatchNormalization with training_mode=1 (opset 14+): normalizes with the batch's own statistics,
     * mean and population variance over every axis but the channels, and returns the running
     * statistics updated by momentum: {@code running = input_running·momentum + batch·(1 − momentum)}.
     */
    private static List<Expr> batchNormTraining(OnnxNode n) {
        TensorType t = n.inputType(0);
        if (t.rank() < 2) throw n.unsupported("training_mode=1 needs N and C axes, got rank " + t.rank());
        double momentum = n.attrFloat("momentum", 0.9f), eps = n.attrFloat("epsilon", 1e-5f);
        long[] axes = new long[t.rank() - 1];
        for (int i = 0, k = 0; i < t.rank(); i++) if (i != 1) axes[k++] = i;
        Expr x = n.input(0);
        Expr mean = n.call("mean", List.of(x), "axis", axes, "keepdims", true);
        Expr d = n.call("subtract", x, mean);
        Expr var = n.call("mean", List.of(n.call("multiply", d, d)), "axis", axes, "keepdims", true);
        Expr batchMean = n.call("reshape", List.of(mean), "newshape", new long[] {-1});
        Expr batchVar = n.call("reshape", List.of(var), "newshape", new long[] {-1});
        Expr bn = n.call("nn.batch_norm", List.of(x, n.input(1), n.input(2), batchMean, batchVar), "axis", 1L, "epsilon", eps);
        DType st = n.inputType(3).dtype();
        Expr runningMean = n.call("add", n.call("multiply", n.input(3), NormConverters.scalar(st, momentum)),
                n.call("multiply", MathConverters.cast(n, batchMean, st), NormConverters.scalar(st, 1 - momentum)));
        Expr runningVar = n.call("add", n.call("multiply", n.input(4), NormConverters.scalar(st, momentum)),
                n.call("multiply", MathConverters.cast(n, batchVar, st), NormConverters.scalar(st, 1 - momentum)));
        return List.of(new TupleGetItem(bn, 0), runningMean, runningVar);
    }

    private static List<Expr> softmax(OnnxNode n, String op) {
        TensorType t = n.inputType(0);
        int rank = t.rank();
        long axis = n.attrInt("axis", n.opset() < 13 ? 1 : -1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= Math.max(rank, 1)) throw n.unsupported("axis " + n.attrInt("axis", 0) + " is out of range for rank " + rank);
        if (n.opset() >= 13 || axis == rank - 1) return List.of(n.call(op, List.of(n.input(0)), "axis", axis));
        // Before opset 13 the input is coerced to 2-D [prod(d < axis), prod(d >= axis)].
        if (!t.isStatic()) throw n.unsupported("opset < 13 softmax over axes " + axis + ".. of a dynamic shape is not supported");
        int[] s = t.staticShape();
        long outer = Arrays.stream(s, 0, (int) axis).asLongStream().reduce(1, (x, y) -> x * y);
        long inner = Arrays.stream(s, (int) axis, rank).asLongStream().reduce(1, (x, y) -> x * y);
        Expr flat = n.call("reshape", List.of(n.input(0)), "newshape", new long[] {outer, inner});
        Expr sm = n.call(op, List.of(flat), "axis", 1L);
        return List.of(n.call("reshape", List.of(sm), "newshape", Arrays.stream(s).asLongStream().toArray()));
    }

    /**
     * Dropout. In inference (training_mode absent or false) and in training with ratio 0 it is the
     * identity and the mask, if asked for, is all true. Training with a ratio above 0 draws a random
     * mask; the spec leaves the generator unspecified (ONNX's expected outputs come from numpy's
     * generator seeded by the reference implementation), so it is not supported.
     */
    private static List<Expr> dropout(OnnxNode n) {
        n.ignore("ratio", "seed", "is_test", "consumed_inputs"); // ratio: an attribute before opset 12, inference only
        boolean training = false;
        if (n.hasInput(2)) {
            long[] mode = n.constantInts(2, "training_mode");
            training = mode.length > 0 && mode[0] != 0;
        }
        if (training) {
            double ratio = 0.5;
            if (n.hasInput(1)) {
                NDArray r = n.requireConstant(1, "ratio");
                if (r.elementCount() != 1) throw n.unsupported("ratio must hold one value, got " + r.elementCount());
                ratio = r.getDouble(0);
            }
            if (ratio != 0) {
                throw n.unsupported("training_mode=True with ratio " + ratio + " draws a random mask, and the spec leaves the random"
                        + " generator unspecified; only ratio 0 (the identity) is supported in training mode");
            }
        }
        List<Expr> outs = new ArrayList<>();
        outs.add(n.input(0));
        if (n.hasOutput(1)) {
            outs.add(n.call("ones_like", List.of(n.call("cast", List.of(n.input(0)), "dtype", "bool"))));
        }
        return outs;
    }
}
