package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.AttrValue;
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
import dev.relayfarm.ops.layout.Layout;
import dev.relayfarm.ops.transform.LayoutTransform;
import java.util.List;

/**
 * {@code nn.contrib_conv2d_NCHWc(data, weight, strides, padding, dilation, groups, channels,
 * kernel_size, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="", out_dtype="")}: the
 * convolution of {@code nn.conv2d} on channel-blocked tensors, as TVM's x86 schedules use it (the
 * inner block is the vector lane). Data is {@code NCHW[x]c}, the weight {@code OIHW[x]i[y]o} and the
 * output {@code NCHW[y]c} (out_layout, default the data layout). Any layout whose primal axes are
 * NCHW / OIHW and that splits at most C (data, output) or O and I (weight) is accepted, so the plain
 * layouts work too.
 * <pre>
 * contrib_conv2d_NCHWc(Tensor[(1, 2, 8, 8, 8)], Tensor[(4, 2, 3, 3, 8, 4)], data_layout="NCHW8c",
 *     kernel_layout="OIHW8i4o", out_layout="NCHW4c")  : Tensor[(1, 4, 6, 6, 4)]
 * </pre>
 * The reference kernel unpacks to NCHW/OIHW, runs {@code nn.conv2d}'s kernel and packs the result.
 */
public final class Conv2DNCHWc {
    public static final String NAME = "nn.contrib_conv2d_NCHWc";
    private static final Layout NCHW = Layout.parse("NCHW");
    private static final Layout OIHW = Layout.parse("OIHW");

    private Conv2DNCHWc() {}

    public record Conv2DNCHWcAttrs(int[] strides, int[] padding, int[] dilation, int groups, long channels, int[] kernelSize,
                                   Layout dataLayout, Layout kernelLayout, Layout outLayout, DType outDtype) {}

    public static OpDef<Conv2DNCHWcAttrs> def() {
        return new OpDef<>(NAME, 2, Conv2DNCHWc::parse, Conv2DNCHWc::relation, OpPattern.OUT_ELEMWISE_FUSABLE, Conv2DNCHWc::compute);
    }

    static Conv2DNCHWcAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        int[] strides = Rel.pair(NAME, "strides", r.ints("strides", 1, 1));
        int[] padding = Rel.pad4(NAME, "padding", r.ints("padding", 0, 0));
        int[] dilation = Rel.pair(NAME, "dilation", r.ints("dilation", 1, 1));
        int groups = r.int32("groups", 1);
        long channels = r.integer("channels", -1);
        int[] kernelSize = r.optionalInts("kernel_size");
        String dataLayout = r.string("data_layout", "NCHW8c");
        String kernelLayout = r.string("kernel_layout", "OIHW8i8o");
        String outLayout = r.string("out_layout", "");
        DType outDtype = r.dtype("out_dtype", null);
        r.finish();
        Rel.positive(NAME, "strides", strides);
        Rel.positive(NAME, "dilation", dilation);
        Rel.nonNegative(NAME, "padding", padding);
        if (groups < 1) throw new RelationException(NAME + ": groups must be positive, got " + groups);
        if (kernelSize != null) kernelSize = Rel.pair(NAME, "kernel_size", kernelSize);
        Layout data = layout("data_layout", dataLayout, "NCHW", "C");
        Layout kernel = layout("kernel_layout", kernelLayout, "OIHW", "OI");
        Layout out = outLayout.isEmpty() ? data : layout("out_layout", outLayout, "NCHW", "C");
        return new Conv2DNCHWcAttrs(strides, padding, dilation, groups, channels, kernelSize, data, kernel, out, outDtype);
    }

    /** Parses a layout whose primal axes are those of {@code canonical} and that splits only axes in {@code splittable}. */
    private static Layout layout(String key, String text, String canonical, String splittable) {
        Layout l;
        try {
            l = Layout.parse(text);
        } catch (IllegalArgumentException e) {
            throw new RelationException(NAME + ": " + key + ": " + e.getMessage());
        }
        if (!l.primalSet().equals(Layout.parse(canonical).primalSet())) {
            throw new RelationException(NAME + ": " + key + " must have the primal axes of " + canonical + ", got \"" + text + "\"");
        }
        for (Layout.Axis a : l.axes()) {
            if (!a.isPrimal() && splittable.indexOf(a.primal()) < 0) {
                throw new RelationException(NAME + ": " + key + " may only split " + String.join(" or ", splittable.split(""))
                        + ", got \"" + text + "\"");
            }
        }
        return l;
    }

    private static List<Dim> convert(String what, Layout from, TensorType t, Layout to) {
        if (t.rank() != from.rank()) {
            throw new RelationException(NAME + ": " + what + " " + Rel.shape(t.shape()) + " must have rank " + from.rank() + " for layout " + from);
        }
        try {
            return Layout.convertShape(from, t.shape(), to);
        } catch (IllegalArgumentException e) {
            throw new RelationException(NAME + ": " + what + " " + Rel.shape(t.shape()) + ": " + e.getMessage());
        }
    }

    static boolean relation(List<Type> types, int numInputs, Conv2DNCHWcAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        TensorType weight = Rel.tensor(NAME, "weight", types.get(1));
        if (data == null || weight == null) return false;
        List<Dim> d = convert("data", a.dataLayout(), data, NCHW);
        List<Dim> w = convert("weight", a.kernelLayout(), weight, OIHW);
        if (Rel.surelyDiffer(d.get(1), Dims.mul(w.get(1), Dim.of(a.groups())))) {
            throw new RelationException(NAME + ": input channels " + d.get(1) + " (data " + Rel.shape(data.shape()) + ") do not match weight "
                    + Rel.shape(weight.shape()) + " (" + w.get(1) + " per group) with groups=" + a.groups());
        }
        if (w.get(0) instanceof Dim.Int(long o) && o % a.groups() != 0) {
            throw new RelationException(NAME + ": output channels " + o + " are not divisible by groups=" + a.groups());
        }
        if (a.channels() >= 0 && Rel.surelyDiffer(w.get(0), Dim.of(a.channels()))) {
            throw new RelationException(NAME + ": channels=" + a.channels() + " does not match weight " + Rel.shape(weight.shape())
                    + " with " + w.get(0) + " output channels");
        }
        if (a.kernelSize() != null && (Rel.surelyDiffer(w.get(2), Dim.of(a.kernelSize()[0]))
                || Rel.surelyDiffer(w.get(3), Dim.of(a.kernelSize()[1])))) {
            throw new RelationException(NAME + ": kernel_size=" + java.util.Arrays.toString(a.kernelSize())
                    + " does not match weight " + Rel.shape(weight.shape()));
        }
        Dim oh = Conv2D.outDim(NAME, "height", d.get(2), w.get(2), a.strides()[0], a.padding()[0] + a.padding()[2], a.dilation()[0]);
        Dim ow = Conv2D.outDim(NAME, "width", d.get(3), w.get(3), a.strides()[1], a.padding()[1] + a.padding()[3], a.dilation()[1]);
        List<Dim> out;
        try {
            out = Layout.convertShape(NCHW, List.of(d.get(0), w.get(0), oh, ow), a.outLayout());
        } catch (IllegalArgumentException e) {
            throw new RelationException(NAME + ": output: " + e.getMessage());
        }
        reporter.assign(types.get(2), new TensorType(out, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, Conv2DNCHWcAttrs a) {
        NDArray x = transform(inputs.get(0), a.dataLayout(), NCHW);
        NDArray w = transform(inputs.get(1), a.kernelLayout(), OIHW);
        dev.relayfarm.ops.nn.Layout nchw = dev.relayfarm.ops.nn.Layout.parse(NAME, "data_layout", "NCHW", "NCHW");
        dev.relayfarm.ops.nn.Layout oihw = dev.relayfarm.ops.nn.Layout.parse(NAME, "kernel_layout", "OIHW", "OIHW");
        Conv2D.Conv2DAttrs plain = new Conv2D.Conv2DAttrs(a.strides(), a.padding(), a.dilation(), a.groups(), a.channels(),
                a.kernelSize(), nchw, oihw, nchw, a.outDtype());
        NDArray out = Conv2D.compute(List.of(x, w), plain).getFirst();
        return List.of(transform(out, NCHW, a.outLayout()));
    }

    private static NDArray transform(NDArray x, Layout from, Layout to) {
        if (from.equals(to)) return x;
        Attrs attrs = Attrs.of("src_layout", AttrValue.of(from.name())).with("dst_layout", AttrValue.of(to.name()));
        return LayoutTransform.DEF.compute(List.of(x), attrs).getFirst();
    }
}
