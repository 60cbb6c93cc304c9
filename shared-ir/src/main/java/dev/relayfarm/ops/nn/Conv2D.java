package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.conv2d(data, weight, strides=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1,
 * channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="",
 * out_dtype="")} as in TVM: padding has 1, 2 or 4 values (top, left, bottom, right); any
 * permutation of NCHW / OIHW is accepted as layout (NHWC with HWIO or HWOI, ...).
 */
public final class Conv2D {
    public static final String NAME = "nn.conv2d";

    private Conv2D() {}

    /** {@code padding} is normalized to {top, left, bottom, right}; {@code channels} is -1 when unset. */
    public record Conv2DAttrs(int[] strides, int[] padding, int[] dilation, int groups, long channels,
                              int[] kernelSize, Layout dataLayout, Layout kernelLayout, Layout outLayout,
                              DType outDtype) {}

    public static OpDef<Conv2DAttrs> def() {
        return new OpDef<>(NAME, 2, Conv2D::parse, Conv2D::relation, OpPattern.OUT_ELEMWISE_FUSABLE, Conv2D::compute);
    }

    static Conv2DAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        Conv2DAttrs a = read(NAME, r, "OIHW");
        r.finish();
        return a;
    }

    /** The attributes conv2d shares with conv2d_transpose (whose weight is IOHW); the caller finishes {@code r}. */
    static Conv2DAttrs read(String op, AttrReader r, String canonicalKernel) {
        int[] strides = Rel.pair(op, "strides", r.ints("strides", 1, 1));
        int[] padding = Rel.pad4(op, "padding", r.ints("padding", 0, 0));
        int[] dilation = Rel.pair(op, "dilation", r.ints("dilation", 1, 1));
        int groups = r.int32("groups", 1);
        long channels = r.integer("channels", -1);
        int[] kernelSize = r.optionalInts("kernel_size");
        String dataLayout = r.string("data_layout", "NCHW");
        String kernelLayout = r.string("kernel_layout", canonicalKernel);
        String outLayout = r.string("out_layout", "");
        DType outDtype = r.dtype("out_dtype", null);
        Rel.positive(op, "strides", strides);
        Rel.positive(op, "dilation", dilation);
        Rel.nonNegative(op, "padding", padding);
        if (groups < 1) throw new RelationException(op + ": groups must be positive, got " + groups);
        if (kernelSize != null) kernelSize = Rel.pair(op, "kernel_size", kernelSize);
        Layout data = Layout.parse(op, "data_layout", dataLayout, "NCHW");
        return new Conv2DAttrs(strides, padding, dilation, groups, channels, kernelSize, data,
                Layout.parse(op, "kernel_layout", kernelLayout, canonicalKernel),
                outLayout.isEmpty() ? data : Layout.parse(op, "out_layout", outLayout, "NCHW"), outDtype);
    }

    static boolean relation(List<Type> types, int numInputs, Conv2DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), 4);
        if (data == null) return false;
        List<Dim> d = a.dataLayout().toCanonical(data.shape()); // N C H W
        TensorType weight = Rel.tensor(NAME, "weight", types.get(1));
        if (weight == null) {
            // As TVM: with channels and kernel_size given, the weight's type follows from the data's.
            if (a.channels() < 0 || a.kernelSize() == null) return false;
            List<Dim> oihw = List.of(Dim.of(a.channels()), Dims.div(d.get(1), Dim.of(a.groups())),
                    Dim.of(a.kernelSize()[0]), Dim.of(a.kernelSize()[1]));
            weight = new TensorType(a.kernelLayout().fromCanonical(oihw), data.dtype());
            reporter.assign(types.get(1), weight);
        }
        if (weight.rank() != 4) throw new RelationException(NAME + ": weight must have rank 4, got " + weight);
        List<Dim> w = a.kernelLayout().toCanonical(weight.shape()); // O I H W
        String ws = Rel.shape(weight.shape());
        if (Rel.surelyDiffer(d.get(1), Dims.mul(w.get(1), Dim.of(a.groups())))) {
            throw new RelationException(NAME + ": input channels " + d.get(1) + " (data) do not match weight "
                    + ws + " with groups=" + a.groups());
        }
        if (w.get(0) instanceof Dim.Int(long o) && o % a.groups() != 0) {
            throw new RelationException(NAME + ": output channels " + o + " of weight " + ws
                    + " are not divisible by groups=" + a.groups());
        }
        if (a.channels() >= 0 && Rel.surelyDiffer(w.get(0), Dim.of(a.channels()))) {
            throw new RelationException(NAME + ": channels=" + a.channels() + " does not match weight " + ws);
        }
        if (a.kernelSize() != null && (Rel.surelyDiffer(w.get(2), Dim.of(a.kernelSize()[0]))
                || Rel.surelyDiffer(w.get(3), Dim.of(a.kernelSize()[1])))) {
            throw new RelationException(NAME + ": kernel_size=" + java.util.Arrays.toString(a.kernelSize())
                    + " does not match weight " + ws);
        }
        Dim oh = outDim(NAME, "height", d.get(2), w.get(2), a.strides()[0], a.padding()[0] + a.padding()[2], a.dilation()[0]);
        Dim ow = outDim(NAME, "width", d.get(3), w.get(3), a.strides()[1], a.padding()[1] + a.padding()[3], a.dilation()[1]);
        List<Dim> out = a.outLayout().fromCanonical(List.of(d.get(0), w.get(0), oh, ow));
        reporter.assign(types.get(2), new TensorType(out, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    /** {@code (in + pad - dilation * (k - 1) - 1) / stride + 1}, rejected when statically non-positive. */
    static Dim outDim(String op, String what, Dim in, Dim k, int stride, int pad, int dilation) {
        Dim span = Dims.add(Dims.mul(Dim.of(dilation), Dims.sub(k, Dim.of(1))), Dim.of(1));
        Dim out = Dims.add(Dims.div(Dims.sub(Dims.add(in, Dim.of(pad)), span), Dim.of(stride)), Dim.of(1));
        if (out instanceof Dim.Int(long v) && v <= 0) {
            throw new RelationException(op + ": output " + what + " would be " + v + ": input " + in + " + padding "
                    + pad + " is smaller than the dilated kernel " + span);
        }
        return out;
    }

    static List<NDArray> compute(List<NDArray> inputs, Conv2DAttrs a) {
        NDArray x = Arrays2.permute(inputs.get(0), a.dataLayout().toCanonicalAxes());
        NDArray w = Arrays2.permute(inputs.get(1), a.kernelLayout().toCanonicalAxes());
        int[] xs = x.shape(), wsh = w.shape();
        if (xs[1] != wsh[1] * a.groups() || wsh[0] % a.groups() != 0) {
            throw new IllegalArgumentException(NAME + ": input channels " + xs[1] + " (data) do not match weight "
                    + Arrays2.show(inputs.get(1).shape()) + " with groups=" + a.groups());
        }
        ConvGeometry g = ConvGeometry.of(xs, wsh, a.strides(), a.padding(), a.dilation(), a.groups());
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        int[] outShape = {g.n(), g.o(), g.oh(), g.ow()};
        NDArray out;
        if (Arrays2.isF32(x) && Arrays2.isF32(w) && outType.equals(DType.FLOAT32)) {
            out = NDArray.wrap(DType.FLOAT32, outShape, ConvKernels.conv2d(x.floatData(), w.floatData(), g));
        } else {
            out = Arrays2.fromDoubles(outType, outShape, ConvKernels.conv2dGeneric(Arrays2.doubles(x), Arrays2.doubles(w), g));
        }
        return List.of(Arrays2.permute(out, a.outLayout().fromCanonicalAxes()));
    }
}
