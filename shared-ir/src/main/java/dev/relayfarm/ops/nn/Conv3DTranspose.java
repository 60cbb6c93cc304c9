package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code nn.conv3d_transpose(data, weight, strides=[1, 1, 1], padding=[0, 0, 0], dilation=[1, 1, 1], groups=1,
 * channels=-1, kernel_size=None, data_layout="NCDHW", kernel_layout="IODHW", out_layout="",
 * output_padding=[0, 0, 0], out_dtype="")}: TVM's 3-D transposed convolution, {@link Conv2DTranspose}
 * with a depth axis. Weight {@code [in_channels, out_channels / groups, kd, kh, kw]}; per axis
 * {@code out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1};
 * {@code padding} is {front, top, left, back, bottom, right}. Only NCDHW / IODHW (nothing packs 5-D
 * layouts); the reference kernel scatters each input element, the TE compute (ConvComputes) gathers.
 */
public final class Conv3DTranspose {
    public static final String NAME = "nn.conv3d_transpose";
    private static final String[] AXES = {"depth", "height", "width"};

    private Conv3DTranspose() {}

    public record Conv3DTransposeAttrs(int[] strides, int[] padding, int[] dilation, int groups, long channels, int[] kernelSize,
                                       int[] outputPadding, DType outDtype) {}

    public static OpDef<Conv3DTransposeAttrs> def() {
        return new OpDef<>(NAME, 2, Conv3DTranspose::parse, Conv3DTranspose::relation, OpPattern.OUT_ELEMWISE_FUSABLE,
                Conv3DTranspose::compute);
    }

    static Conv3DTransposeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        int[] strides = Rel.triple(NAME, "strides", r.ints("strides", 1, 1, 1));
        int[] padding = Rel.pad6(NAME, "padding", r.ints("padding", 0, 0, 0));
        int[] dilation = Rel.triple(NAME, "dilation", r.ints("dilation", 1, 1, 1));
        int groups = r.int32("groups", 1);
        long channels = r.integer("channels", -1);
        int[] kernelSize = r.optionalInts("kernel_size");
        String dataLayout = r.string("data_layout", "NCDHW");
        String kernelLayout = r.string("kernel_layout", "IODHW");
        String outLayout = r.string("out_layout", "");
        int[] outputPadding = Rel.triple(NAME, "output_padding", r.ints("output_padding", 0, 0, 0));
        DType outDtype = r.dtype("out_dtype", null);
        r.finish();
        if (!dataLayout.equals("NCDHW") || !kernelLayout.equals("IODHW") || !(outLayout.isEmpty() || outLayout.equals("NCDHW"))) {
            throw new RelationException(NAME + ": only data_layout NCDHW, kernel_layout IODHW are supported, got " + dataLayout + ", "
                    + kernelLayout + (outLayout.isEmpty() ? "" : ", out_layout " + outLayout));
        }
        Rel.positive(NAME, "strides", strides);
        Rel.positive(NAME, "dilation", dilation);
        Rel.nonNegative(NAME, "padding", padding);
        Rel.nonNegative(NAME, "output_padding", outputPadding);
        if (groups < 1) throw new RelationException(NAME + ": groups must be positive, got " + groups);
        if (kernelSize != null) kernelSize = Rel.triple(NAME, "kernel_size", kernelSize);
        for (int i = 0; i < 3; i++) {
            if (outputPadding[i] >= Math.max(strides[i], dilation[i])) {
                throw new RelationException(NAME + ": output_padding " + Arrays.toString(outputPadding) + " must be smaller than strides "
                        + Arrays.toString(strides) + " or dilation");
            }
        }
        return new Conv3DTransposeAttrs(strides, padding, dilation, groups, channels, kernelSize, outputPadding, outDtype);
    }

    static boolean relation(List<Type> types, int numInputs, Conv3DTransposeAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), 5);
        if (data == null) return false;
        List<Dim> d = data.shape();
        TensorType weight = Rel.tensor(NAME, "weight", types.get(1));
        if (weight == null) {
            if (a.channels() < 0 || a.kernelSize() == null) return false;
            weight = new TensorType(List.of(d.get(1), Dim.of(a.channels() / a.groups()), Dim.of(a.kernelSize()[0]), Dim.of(a.kernelSize()[1]),
                    Dim.of(a.kernelSize()[2])), data.dtype());
            reporter.assign(types.get(1), weight);
        }
        if (weight.rank() != 5) throw new RelationException(NAME + ": weight must have rank 5, got " + weight);
        List<Dim> w = weight.shape();
        Dim outC = Conv2DTranspose.outChannels(NAME, d.get(1), w, Rel.shape(w), a.groups(), a.channels());
        List<Dim> out = new ArrayList<>(List.of(d.get(0), outC));
        for (int i = 0; i < 3; i++) {
            out.add(Conv2DTranspose.outDim(NAME, AXES[i], d.get(2 + i), w.get(2 + i), a.strides()[i], a.padding()[i] + a.padding()[3 + i],
                    a.dilation()[i], a.outputPadding()[i]));
        }
        reporter.assign(types.get(2), new TensorType(out, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    /** Each input element, times each weight tap, lands on one output position (or outside it, cropped by the padding). */
    static List<NDArray> compute(List<NDArray> inputs, Conv3DTransposeAttrs a) {
        NDArray x = inputs.get(0), w = inputs.get(1);
        int n = x.dim(0), c = x.dim(1), groups = a.groups(), og = w.dim(1), o = og * groups, cg = c / groups;
        if (w.dim(0) != c || c % groups != 0) {
            throw new IllegalArgumentException(NAME + ": input channels " + c + " (data) do not match weight " + Arrays2.show(w.shape())
                    + " with groups=" + groups);
        }
        int[] in = {x.dim(2), x.dim(3), x.dim(4)}, k = {w.dim(2), w.dim(3), w.dim(4)}, out = new int[3];
        for (int i = 0; i < 3; i++) {
            out[i] = (in[i] - 1) * a.strides()[i] - a.padding()[i] - a.padding()[3 + i] + a.dilation()[i] * (k[i] - 1) + a.outputPadding()[i] + 1;
        }
        int inVol = in[0] * in[1] * in[2], kVol = k[0] * k[1] * k[2], outVol = out[0] * out[1] * out[2];
        double[] xd = Arrays2.doubles(x), wd = Arrays2.doubles(w), res = new double[n * o * outVol];
        int[] s = a.strides(), dl = a.dilation(), p = a.padding();
        // one task per (batch, output channel): it owns its output volume, so the scatter needs no locking
        Parallel.forEach(n * o, (long) n * o * cg * inVol * kVol, task -> {
            int b = task / o, oc = task % o, g = oc / og, ocg = oc % og, ob = task * outVol;
            for (int icg = 0; icg < cg; icg++) {
                int ic = g * cg + icg, xb = (b * c + ic) * inVol, wb = (ic * og + ocg) * kVol;
                for (int z = 0; z < in[0]; z++) for (int y = 0; y < in[1]; y++) for (int xx = 0; xx < in[2]; xx++) {
                    double v = xd[xb + (z * in[1] + y) * in[2] + xx];
                    for (int kz = 0; kz < k[0]; kz++) {
                        int oz = z * s[0] - p[0] + kz * dl[0];
                        if (oz < 0 || oz >= out[0]) continue;
                        for (int ky = 0; ky < k[1]; ky++) {
                            int oy = y * s[1] - p[1] + ky * dl[1];
                            if (oy < 0 || oy >= out[1]) continue;
                            for (int kx = 0; kx < k[2]; kx++) {
                                int ox = xx * s[2] - p[2] + kx * dl[2];
                                if (ox < 0 || ox >= out[2]) continue;
                                res[ob + (oz * out[1] + oy) * out[2] + ox] += v * wd[wb + (kz * k[1] + ky) * k[2] + kx];
                            }
                        }
                    }
                }
            }
        });
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        return List.of(Arrays2.fromDoubles(outType, new int[] {n, o, out[0], out[1], out[2]}, res));
    }
}
