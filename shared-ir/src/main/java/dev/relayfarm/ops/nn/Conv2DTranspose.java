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
 * {@code nn.conv2d_transpose(data, weight, strides, padding, dilation, groups, channels, kernel_size,
 * data_layout="NCHW", kernel_layout="IOHW", out_layout="", output_padding=[0, 0], out_dtype="")}.
 * As in TVM the weight is {@code [in_channels, out_channels / groups, kh, kw]} and
 * {@code out = (in - 1) * stride - pad_top - pad_bottom + dilation * (k - 1) + output_padding + 1}.
 */
public final class Conv2DTranspose {
    public static final String NAME = "nn.conv2d_transpose";

    private Conv2DTranspose() {}

    public record Conv2DTransposeAttrs(Conv2D.Conv2DAttrs conv, int[] outputPadding) {}

    public static OpDef<Conv2DTransposeAttrs> def() {
        return new OpDef<>(NAME, 2, Conv2DTranspose::parse, Conv2DTranspose::relation, OpPattern.OUT_ELEMWISE_FUSABLE,
                Conv2DTranspose::compute);
    }

    static Conv2DTransposeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        Conv2D.Conv2DAttrs conv = Conv2D.read(NAME, r, "IOHW");
        int[] outputPadding = Rel.pair(NAME, "output_padding", r.ints("output_padding", 0, 0));
        r.finish();
        Rel.nonNegative(NAME, "output_padding", outputPadding);
        for (int i = 0; i < 2; i++) {
            if (outputPadding[i] >= Math.max(conv.strides()[i], conv.dilation()[i])) {
                throw new RelationException(NAME + ": output_padding " + java.util.Arrays.toString(outputPadding)
                        + " must be smaller than strides " + java.util.Arrays.toString(conv.strides()) + " or dilation");
            }
        }
        return new Conv2DTransposeAttrs(conv, outputPadding);
    }

    static boolean relation(List<Type> types, int numInputs, Conv2DTransposeAttrs at, TypeReporter reporter) {
        Conv2D.Conv2DAttrs a = at.conv();
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), 4);
        if (data == null) return false;
        List<Dim> d = a.dataLayout().toCanonical(data.shape());
        TensorType weight = Rel.tensor(NAME, "weight", types.get(1));
        if (weight == null) {
            if (a.channels() < 0 || a.kernelSize() == null) return false;
            List<Dim> iohw = List.of(d.get(1), Dim.of(a.channels() / a.groups()), Dim.of(a.kernelSize()[0]), Dim.of(a.kernelSize()[1]));
            weight = new TensorType(a.kernelLayout().fromCanonical(iohw), data.dtype());
            reporter.assign(types.get(1), weight);
        }
        if (weight.rank() != 4) throw new RelationException(NAME + ": weight must have rank 4, got " + weight);
        List<Dim> w = a.kernelLayout().toCanonical(weight.shape()); // I O/g H W
        Dim outC = outChannels(NAME, d.get(1), w, Rel.shape(weight.shape()), a.groups(), a.channels());
        Dim oh = outDim(NAME, "height", d.get(2), w.get(2), a.strides()[0], a.padding()[0] + a.padding()[2], a.dilation()[0], at.outputPadding()[0]);
        Dim ow = outDim(NAME, "width", d.get(3), w.get(3), a.strides()[1], a.padding()[1] + a.padding()[3], a.dilation()[1], at.outputPadding()[1]);
        reporter.assign(types.get(2), new TensorType(a.outLayout().fromCanonical(List.of(d.get(0), outC, oh, ow)),
                a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    /**
     * The output channels of a transposed convolution (the weight's O/g times groups) once the data's channels and the
     * {@code channels} attribute agree with the weight ({@code w} canonical: I, O/g, spatial...). Shared with
     * {@code nn.conv3d_transpose}: {@code op} names the operator in the errors.
     */
    static Dim outChannels(String op, Dim dataChannels, List<Dim> w, String weightShape, int groups, long channels) {
        if (Rel.surelyDiffer(dataChannels, w.get(0))) {
            throw new RelationException(op + ": input channels " + dataChannels + " (data) do not match weight " + weightShape + " with groups=" + groups);
        }
        if (dataChannels instanceof Dim.Int(long c) && c % groups != 0) {
            throw new RelationException(op + ": input channels " + c + " are not divisible by groups=" + groups);
        }
        Dim outC = Dims.mul(w.get(1), Dim.of(groups));
        if (channels >= 0 && Rel.surelyDiffer(outC, Dim.of(channels))) {
            throw new RelationException(op + ": channels=" + channels + " does not match weight " + weightShape + " with groups=" + groups);
        }
        return outC;
    }

    /** One spatial output length of a transposed convolution; {@code pad} is the sum of both sides. Shared with 3-D. */
    static Dim outDim(String op, String what, Dim in, Dim k, int stride, int pad, int dilation, int outPad) {
        Dim out = Dims.add(Dims.add(Dims.mul(Dims.sub(in, Dim.of(1)), Dim.of(stride)), Dims.mul(Dim.of(dilation), Dims.sub(k, Dim.of(1)))),
                Dim.of(outPad + 1 - pad));
        if (out instanceof Dim.Int(long v) && v <= 0) {
            throw new RelationException(op + ": output " + what + " would be " + v + " (padding " + pad + " too large)");
        }
        return out;
    }

    static List<NDArray> compute(List<NDArray> inputs, Conv2DTransposeAttrs at) {
        Conv2D.Conv2DAttrs a = at.conv();
        NDArray x = Arrays2.permute(inputs.get(0), a.dataLayout().toCanonicalAxes());
        NDArray w = Arrays2.permute(inputs.get(1), a.kernelLayout().toCanonicalAxes());
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
        int og = w.dim(1), kh = w.dim(2), kw = w.dim(3), groups = a.groups();
        if (w.dim(0) != c || c % groups != 0) {
            throw new IllegalArgumentException(NAME + ": input channels " + c + " (data) do not match weight "
                    + Arrays2.show(inputs.get(1).shape()) + " with groups=" + groups);
        }
        int sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1];
        int oh = (h - 1) * sh - pt - a.padding()[2] + dh * (kh - 1) + at.outputPadding()[0] + 1;
        int ow = (wd - 1) * sw - pl - a.padding()[3] + dw * (kw - 1) + at.outputPadding()[1] + 1;
        int o = og * groups, cg = c / groups;
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        int[] outShape = {n, o, oh, ow};
        int rows = og * kh * kw, pix = h * wd;
        double[] outD = null;
        float[] outF = null;
        boolean fast = Arrays2.isF32(x) && Arrays2.isF32(w) && outType.equals(DType.FLOAT32);
        if (fast) outF = new float[n * o * oh * ow];
        else outD = new double[n * o * oh * ow];
        double[] xd = fast ? null : Arrays2.doubles(x), wdd = fast ? null : Arrays2.doubles(w);
        float[] col = fast ? new float[rows * pix] : null;
        double[] colD = fast ? null : new double[rows * pix];
        for (int b = 0; b < n; b++) {
            for (int g = 0; g < groups; g++) {
                // col[(oc, r, s), (ih, iw)] = sum over this group's input channels of w[ic, oc, r, s] * x[ic, ih, iw]
                int wOff = g * cg * rows, xOff = (b * c + g * cg) * pix;
                if (fast) Gemm.sgemm(rows, pix, cg, w.floatData(), wOff, rows, true, x.floatData(), xOff, pix, false, col, 0, pix);
                else Gemm.dgemm(rows, pix, cg, wdd, wOff, true, xd, xOff, false, colD, 0);
                // scatter each column entry to the output pixel it contributes to (col2im)
                for (int row = 0; row < rows; row++) {
                    int oc = row / (kh * kw), r = (row / kw) % kh, s = row % kw;
                    int outPlane = (b * o + g * og + oc) * oh * ow;
                    for (int ih = 0; ih < h; ih++) {
                        int y = ih * sh - pt + r * dh;
                        if (y < 0 || y >= oh) continue;
                        for (int iw = 0; iw < wd; iw++) {
                            int xx = iw * sw - pl + s * dw;
                            if (xx < 0 || xx >= ow) continue;
                            if (fast) outF[outPlane + y * ow + xx] += col[row * pix + ih * wd + iw];
                            else outD[outPlane + y * ow + xx] += colD[row * pix + ih * wd + iw];
                        }
                    }
                }
            }
        }
        NDArray out = fast ? NDArray.wrap(DType.FLOAT32, outShape, outF) : Arrays2.fromDoubles(outType, outShape, outD);
        return List.of(Arrays2.permute(out, a.outLayout().fromCanonicalAxes()));
    }
}
