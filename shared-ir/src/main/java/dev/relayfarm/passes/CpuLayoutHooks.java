package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.layout.Layout;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.List;
import java.util.Map;
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
 * block divides keeps its layout. A convolution with fewer input channels than a vector (an image's 3)
 * takes them all as one input block ({@code NCHW3c}), as TVM's x86 schedules do. Choosing blocks by
 * channel count alone means a convolution's output blocks are the next one's input blocks whenever the
 * channel counts agree, so no transform is needed between them; a depthwise convolution feeding a grouped
 * one takes that one's smaller input block ({@link #forFunction}).
 */
public final class CpuLayoutHooks {
    private CpuLayoutHooks() {}

    /** The hooks with these block sizes, most preferred first. */
    public static AlterLayoutHooks hooks(List<Integer> blocks) {
        return hooks(blocks, Map.of());
    }

    /**
     * The hooks for {@code target} in {@code function}: its blocks, and for a depthwise convolution whose result flows
     * (through element-wise ops) into a grouped convolution, that convolution's input block when it is smaller. A
     * depthwise convolution is bound by memory, not by its lanes, so next to ShuffleNet's 68-channel groups it takes
     * 4-lane blocks instead of 16-lane ones and a layout transform on its way out.
     */
    public static AlterLayoutHooks forFunction(Target target, Function function, InferResult types) {
        List<Integer> bs = halfBlocks(target.channelBlocks());
        Map<Expr, List<Call>> consumers = new java.util.IdentityHashMap<>();
        List<Call> depthwise = new java.util.ArrayList<>();
        for (Expr e : ExprTraversal.postOrder(function.body())) {
            if (!(e instanceof Call c)) continue;
            for (Expr a : c.args()) consumers.computeIfAbsent(a, k -> new java.util.ArrayList<>()).add(c);
            if (isConv(c) && depthwise(c, types.typeOf(c.args().get(0)), types.typeOf(c.args().get(1)))) depthwise.add(c);
        }
        Map<Call, Integer> blocksOf = new java.util.IdentityHashMap<>();
        for (Call dw : depthwise) {
            Expr at = dw;
            // follow a single consumer through element-wise ops (bias, batch-norm scale, activation) to the next operator
            for (int hops = 0; hops < 8; hops++) {
                List<Call> next = consumers.getOrDefault(at, List.of());
                if (next.size() != 1) break;
                Call c = next.getFirst();
                if (isConv(c) && c.args().getFirst() == at && LayoutRewriter.intAttr(c.attrs(), "groups", 1) > 1
                        && !depthwise(c, types.typeOf(at), types.typeOf(c.args().get(1))) && types.typeOf(c.args().get(1)) instanceof TensorType w
                        && w.isStatic()) {
                    Layout kernel = LayoutRewriter.layoutAttr(c.attrs(), "kernel_layout", "OIHW");
                    int ic = kernel == null || kernel.isBlocked() ? 0 : block(kernel.extent(w.shape(), 'I'), bs);
                    if (ic > 0) blocksOf.put(dw, ic);
                    break;
                }
                if (!(c.callee() instanceof Op op) || OpRegistry.find(op.name()).map(d -> d.pattern().compareTo(OpPattern.BROADCAST) > 0).orElse(true)) break;
                at = c;
            }
        }
        return hooks(target.channelBlocks(), blocksOf);
    }

    private static boolean isConv(Call c) {
        return c.callee() instanceof Op op && op.name().equals("nn.conv2d") && c.args().size() == 2;
    }

    /**
     * Whether conv2d {@code c} with data and weight types {@code x} and {@code w} is depthwise: one filter per channel
     * (groups = input channels = output channels, one input channel a filter), read through its own unblocked layouts.
     */
    private static boolean depthwise(Call c, Type x, Type w) {
        long groups = LayoutRewriter.intAttr(c.attrs(), "groups", 1);
        Layout data = LayoutRewriter.layoutAttr(c.attrs(), "data_layout", "NCHW"), kernel = LayoutRewriter.layoutAttr(c.attrs(), "kernel_layout", "OIHW");
        if (groups < 2 || data == null || kernel == null || data.isBlocked() || kernel.isBlocked()) return false;
        if (!(x instanceof TensorType xt) || !(w instanceof TensorType wt) || xt.rank() != data.rank() || wt.rank() != kernel.rank()
                || !channelsStatic(xt, data) || !wt.isStatic()) return false;
        return data.extent(xt.shape(), 'C').value() == groups && kernel.extent(wt.shape(), 'O').value() == groups && kernel.extent(wt.shape(), 'I').value() == 1;
    }

    private static AlterLayoutHooks hooks(List<Integer> blocks, Map<Call, Integer> depthwiseBlocks) {
        if (blocks.isEmpty() || blocks.stream().anyMatch(b -> b < 1)) throw new IllegalArgumentException("block sizes must be positive, got " + blocks);
        List<Integer> bs = List.copyOf(blocks);
        return AlterLayoutHooks.none().with("nn.conv2d", (call, argTypes, resultType) -> conv2dNCHWc(call, argTypes, bs, depthwiseBlocks));
    }

    private static Optional<LayoutChange> conv2dNCHWc(Call call, List<Type> argTypes, List<Integer> blocks, Map<Call, Integer> depthwiseBlocks) {
        Attrs attrs = call.attrs();
        long groups = LayoutRewriter.intAttr(attrs, "groups", 1);
        Layout data = LayoutRewriter.layoutAttr(attrs, "data_layout", "NCHW");
        Layout kernel = LayoutRewriter.layoutAttr(attrs, "kernel_layout", "OIHW");
        if (data == null || kernel == null) return Optional.empty();
        Layout out = LayoutRewriter.layoutAttr(attrs, "out_layout", data.name());
        if (out == null || data.isBlocked() || kernel.isBlocked() || out.isBlocked()) return Optional.empty();
        if (!(argTypes.get(0) instanceof TensorType x) || !(argTypes.get(1) instanceof TensorType w)) return Optional.empty();
        if (x.rank() != data.rank() || !channelsStatic(x, data) || !w.isStatic()) return Optional.empty();
        // NCHWc conv2d has only a template, which accumulates in the output dtype: a float16/bfloat16 conv stays
        // NCHW, whose compute accumulates in float32 (OpComputes) and rounds once
        if (dev.relayfarm.ir.HalfFloats.isNarrow(x.dtype()) || dev.relayfarm.ir.HalfFloats.isNarrow(w.dtype())) return Optional.empty();
        // nor does it cast: an integer conv (int8 x int8 -> int32, as quantize-realize writes) stays NCHW, whose compute
        // casts the operands to out_dtype
        String outDtype = attrs.get("out_dtype").orElse(null) instanceof dev.relayfarm.ir.AttrValue.StringValue(String s) ? s : "";
        if (!x.dtype().isFloat() || !w.dtype().isFloat() || !outDtype.isEmpty() && !outDtype.equals(x.dtype().toString())) return Optional.empty();
        Dim channels = data.extent(x.shape(), 'C');
        boolean depthwise = depthwise(call, x, w);
        int ic, oc;
        // blocked by the first block that divides the channels (of a group), down to half a vector: 4-lane vectors (28, 36
        // or 68 channels) still beat leaving the convolution in NCHW with its columns as lanes
        List<Integer> bs = halfBlocks(blocks);
        if (depthwise) {
            ic = oc = block(channels, bs);
            Integer neighbours = depthwiseBlocks.get(call);
            if (neighbours != null && neighbours < ic) ic = oc = neighbours;
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

    /**
     * Whether the channels of {@code t} ({@code C} in {@code layout}), the one axis the blocked layout splits, are static:
     * a dynamic batch keeps the blocked layout, whose transforms and convolution keep the batch first (the VM's row kernels
     * run them per row), and so does a dynamic height or width (the VM's width kernels: kernel/lower/WidthKernels).
     */
    private static boolean channelsStatic(TensorType t, Layout layout) {
        int c = layout.name().indexOf('C');
        return c >= 0 && c < t.rank() && t.shape().get(c).isStatic();
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
