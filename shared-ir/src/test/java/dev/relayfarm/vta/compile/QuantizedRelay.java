package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.quantize.Realize;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Realized int8 layers written as Realize writes them (conv2d / dense with out_dtype int32, bias_add, relu, the
 * fixed-point requantize cast(int64) · m0 + 2^(sh-1) >> sh, clip, cast), with seeded random weights, biases and
 * per-channel multipliers, so the interpreter's result is the CPU int8 reference for the accelerator.
 */
public final class QuantizedRelay {
    private QuantizedRelay() {
    }

    /** A requantized conv2d layer (NCHW, one image): {@code relu} before the requantize, output uint8 [0, 255] when {@code unsigned}. */
    public static IRModule conv(long seed, int cin, int h, int w, int cout, int k, int stride, int pad, DType inputDtype, boolean relu, boolean unsigned,
            double minMultiplier, double maxMultiplier) {
        Random r = new Random(seed);
        Var x = Var.fresh("x", TensorType.of(inputDtype, 1, cin, h, w));
        Attrs attrs = Attrs.of("strides", ints(stride, stride)).with("padding", ints(pad, pad, pad, pad)).with("kernel_size", ints(k, k))
                .with("channels", AttrValue.of(cout)).with("out_dtype", AttrValue.of("int32"));
        Expr acc = new Call(Op.get("nn.conv2d"), List.of(x, weights(r, cout, cin * k * k, new int[] {cout, cin, k, k})), attrs);
        return module(x, epilogue(r, acc, cout, new int[] {cout, 1, 1}, relu, unsigned, minMultiplier, maxMultiplier));
    }

    /** A dense layer: requantized to int8 when {@code requantize}, else the int32 accumulator plus bias. */
    public static IRModule dense(long seed, int rows, int cin, int cout, boolean requantize, double minMultiplier, double maxMultiplier) {
        Random r = new Random(seed);
        Var x = Var.fresh("x", TensorType.of(DType.INT8, rows, cin));
        Expr acc = new Call(Op.get("nn.dense"), List.of(x, weights(r, cout, cin, new int[] {cout, cin})), Attrs.of("out_dtype", AttrValue.of("int32")));
        if (!requantize) {
            int[] b = r.ints(cout, -20000, 20000).toArray();
            return module(x, Call.op("add", acc, new Constant(NDArray.wrap(DType.INT32, new int[] {1, cout}, b))));
        }
        return module(x, epilogue(r, acc, cout, new int[] {cout}, false, false, minMultiplier, maxMultiplier));
    }

    public static NDArray input(long seed, DType dtype, int... shape) {
        Random r = new Random(seed);
        long[] v = new long[NDArray.elementCount(dtype, shape)];
        for (int i = 0; i < v.length; i++) v[i] = dtype.equals(DType.UINT8) ? r.nextInt(256) : r.nextInt(255) - 127;
        return NDArray.fromLongs(dtype, shape, v);
    }

    private static Expr epilogue(Random r, Expr acc, int cout, int[] channelShape, boolean relu, boolean unsigned, double minM, double maxM) {
        int[] bias = r.ints(cout, -3000, 3000).toArray();
        Expr e = new Call(Op.get("nn.bias_add"), List.of(acc, new Constant(NDArray.wrap(DType.INT32, new int[] {cout}, bias))), Attrs.of("axis", AttrValue.of(1)));
        if (relu) e = Call.op("nn.relu", e);
        long[] m0 = new long[cout], sh = new long[cout], half = new long[cout];
        for (int c = 0; c < cout; c++) {
            double m = minM * Math.pow(maxM / minM, r.nextDouble());
            long[] fp = Realize.fixedPoint(m); // m = m0 · 2^-sh with m0 in [2^30, 2^31), as realize writes it
            m0[c] = fp[0];
            sh[c] = fp[1];
            half[c] = 1L << (sh[c] - 1);
        }
        e = Call.op("cast", e);
        e = new Call(Op.get("cast"), ((Call) e).args(), Attrs.of("dtype", AttrValue.of("int64")));
        e = Call.op("multiply", e, longs(m0, channelShape));
        e = Call.op("add", e, longs(half, channelShape));
        e = Call.op("right_shift", e, longs(sh, channelShape));
        e = new Call(Op.get("clip"), List.of(e), Attrs.of("a_min", AttrValue.of(unsigned ? 0.0 : -127.0)).with("a_max", AttrValue.of(unsigned ? 255.0 : 127.0)));
        return new Call(Op.get("cast"), List.of(e), Attrs.of("dtype", AttrValue.of(unsigned ? "uint8" : "int8")));
    }

    private static Constant weights(Random r, int cout, int perChannel, int[] shape) {
        byte[] w = new byte[cout * perChannel];
        for (int i = 0; i < w.length; i++) w[i] = (byte) (r.nextInt(255) - 127);
        return new Constant(NDArray.wrap(DType.INT8, shape, w));
    }

    private static Constant longs(long[] v, int[] shape) {
        return new Constant(NDArray.fromLongs(DType.INT64, shape, v));
    }

    private static AttrValue ints(int... v) {
        List<AttrValue> l = new ArrayList<>();
        for (int i : v) l.add(AttrValue.of(i));
        return new AttrValue.ListValue(l);
    }

    private static IRModule module(Var x, Expr body) {
        return IRModule.fromMain(new Function(List.of(x), body));
    }
}
