package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.ops.layout.Layout;
import java.util.List;
import java.util.Optional;

/**
 * The CPU target's layout hooks for {@link AlterOpLayout}, after TVM's x86 {@code conv2d_alter_layout}:
 * an {@code nn.conv2d} with static shapes becomes {@code nn.contrib_conv2d_NCHWc}
 * with input channels in blocks of {@code ic} and output channels in blocks of {@code oc}, each the
 * first of the preferred block sizes that divides the channel count (the block is the vector lane
 * the kernel will use: the target's {@link Target#channelBlocks()}); a convolution no block size
 * divides keeps its layout.
 * <pre>
 * nn.conv2d(%x: (1, 32, 8, 8), %w: (16, 32, 3, 3))   blocks [16, 8]
 *   ==> nn.contrib_conv2d_NCHWc(%x as NCHW16c, %w as OIHW16i16o, data_layout="NCHW16c",
 *                               kernel_layout="OIHW16i16o", out_layout="NCHW16c")
 * </pre>
 * Channel counts no preferred block divides take half the smallest (4: 28 or 36 channels in 4-lane vectors). A
 * depthwise convolution's weight {@code [C, 1, KH, KW]} is blocked {@code OIHW1i[c]o}, its data and output
 * {@code NCHW[c]c}, so it sits between pointwise convolutions without a transform. Other grouped convolutions
 * are blocked by what divides the channels of one group, so a group holds whole blocks; one whose groups no
 * block divides keeps its layout. A convolution with fewer input channels than a
 * vector (an image's 3) takes them all as one input block ({@code NCHW3c}), as TVM's x86 schedules do. Choosing blocks by channel count alone
 * means a convolution's output blocks are the next one's input blocks whenever the channel counts
 * agree, so no transform is needed between them.
 */
public final class CpuLayoutHooks {
    private CpuLayoutHooks() {}

    /** The hooks for {@code target}: its channel blocks. */
    public static AlterLayoutHooks forTarget(Target target) {
        return hooks(target.channelBlocks());
    }

    /** The hooks with these block sizes, most preferred first. */
    public static AlterLayoutHooks hooks(List<Integer> blocks) {
        if (blocks.isEmpty() || blocks.stream().anyMatch(b -> b < 1)) throw new IllegalArgumentException("block sizes must be positive, got " + blocks);
        List<Integer> bs = List.copyOf(blocks);
        return AlterLayoutHooks.none().with("nn.conv2d", (call, argTypes, resultType) -> conv2dNCHWc(call, argTypes, bs));
    }

    static Optional<LayoutChange> conv2dNCHWc(Call call, List<Type> argTypes, List<Integer> blocks) {
        Attrs attrs = call.attrs();
        long groups = LayoutRewriter.intAttr(attrs, "groups", 1);
        Layout data = LayoutRewriter.layoutAttr(attrs, "data_layout", "NCHW");
        Layout kernel = LayoutRewriter.layoutAttr(attrs, "kernel_layout", "OIHW");
        if (data == null || kernel == null) return Optional.empty();
        Layout out = LayoutRewriter.layoutAttr(attrs, "out_layout", data.name());
        if (out == null || data.isBlocked() || kernel.isBlocked() || out.isBlocked()) return Optional.empty();
        if (!(argTypes.get(0) instanceof TensorType x) || !(argTypes.get(1) instanceof TensorType w)) return Optional.empty();
        if (x.shape().stream().anyMatch(d -> !d.isStatic()) || w.shape().stream().anyMatch(d -> !d.isStatic())) return Optional.empty();
        // NCHWc conv2d has only a template, which accumulates in the output dtype: a float16/bfloat16 conv stays
        // NCHW, whose compute accumulates in float32 (OpComputes) and rounds once
        if (dev.relayfarm.ir.HalfFloats.isNarrow(x.dtype()) || dev.relayfarm.ir.HalfFloats.isNarrow(w.dtype())) return Optional.empty();
        Dim channels = data.extent(x.shape(), 'C');
        boolean depthwise = groups > 1 && channels.value() == groups && kernel.extent(w.shape(), 'O').value() == groups
                && kernel.extent(w.shape(), 'I').value() == 1;
        int ic, oc;
        // blocked by the first block that divides the channels (of a group), down to half a vector: 4-lane vectors (28, 36
        // or 68 channels) still beat leaving the convolution in NCHW with its columns as lanes
        List<Integer> bs = halfBlocks(blocks);
        if (depthwise) {
            ic = oc = block(channels, bs);
        } else {
            ic = block(kernel.extent(w.shape(), 'I'), bs);
            // a first layer (3 or 4 input channels, fewer than a vector) takes all its channels as one block: its output
            // comes out blocked for the next layer, and each input value is one broadcast for a vector of output channels
            if (ic == 0 && groups == 1 && channels.value() < blocks.getLast()) ic = (int) channels.value();
            oc = block(Dim.of(kernel.extent(w.shape(), 'O').value() / groups), bs);
        }
        if (ic == 0 || oc == 0) return Optional.empty();
        Layout dataNew = Layout.parse("NCHW" + ic + "c");
        // a depthwise filter reads one input channel: its weight blocks only the output channels, the block's lanes
        Layout kernelNew = Layout.parse(depthwise ? "OIHW1i" + oc + "o" : "OIHW" + ic + "i" + oc + "o");
        Layout outNew = Layout.parse("NCHW" + oc + "c");
        Attrs newAttrs = attrs.with("data_layout", AttrValue.of(dataNew.name())).with("kernel_layout", AttrValue.of(kernelNew.name()))
                .with("out_layout", AttrValue.of(outNew.name()));
        return Optional.of(new LayoutChange(List.of(data, kernel), List.of(dataNew, kernelNew), out, outNew,
                args -> new Call(Op.get("nn.contrib_conv2d_NCHWc"), args, newAttrs, List.of(), call.span())));
    }

    /** The blocks, then half the smallest: 28 or 68 channels are computed in 4-lane vectors rather than not blocked. */
    static List<Integer> halfBlocks(List<Integer> blocks) {
        int half = blocks.getLast() / 2;
        if (half < 2) return blocks;
        List<Integer> out = new java.util.ArrayList<>(blocks);
        out.add(half);
        return out;
    }

    private static int block(Dim channels, List<Integer> blocks) {
        for (int b : blocks) if (channels.value() % b == 0) return b;
        return 0;
    }
}
