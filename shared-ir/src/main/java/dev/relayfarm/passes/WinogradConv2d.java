package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.nn.Conv2DNCHWc;
import dev.relayfarm.ops.nn.WinogradConv2D;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.List;

/**
 * Computes the blocked 3x3 convolutions alter-op-layout made with Winograd's minimal filtering F(m x m, 3 x 3)
 * (TVM's x86 {@code conv2d_winograd} strategy): a stride-1, dilation-1, ungrouped float32
 * {@code nn.contrib_conv2d_NCHWc} with a constant 3x3 weight, at least {@code minChannels} input and output
 * channels in blocks of whole 8-lane vectors and an output of at least {@code minOutput} x {@code minOutput}, becomes
 * <pre>
 * nn.contrib_conv2d_NCHWc(%x, W, padding=P, data_layout="NCHW[x]c", kernel_layout="OIHW[x]i[y]o", out_layout="NCHW[y]c")
 *   ==> nn.contrib_conv2d_winograd_NCHWc(%x, nn.contrib_conv2d_winograd_weight_transform(W, tile_size=m, kernel_layout="OIHW[x]i[y]o"),
 *                                        tile_size=m, padding=P, channels=O, data_layout="NCHW[x]c", out_layout="NCHW[y]c")
 * </pre>
 * with the same data and output layouts, so the convolutions around it see no change; the weight transform is left
 * for fold-constant (after this pass in the pipeline) to compute once at compile time. It runs after
 * alter-op-layout, whose blocks it keeps.
 *
 * <p>On at -O3 ({@link Options#DEFAULT}; measured faster than the direct template on resnet50, vgg19 and mlsd, see the
 * README); disabling the pass ({@link PassOptions#disabled()}, what {@code relayc compile|bench|profile|tune --winograd
 * off} does) turns it off. {@link Options#tileSize} 2 picks F(2x2, 3x3) (slower than F(4x4) on resnet50's 56 and 28
 * maps, level at 14 and 7); with options whose {@code enabled} is false, forcing the pass turns it on. Not done:
 * strided, dilated, grouped or non-3x3 convolutions; weights that are not constants (the transform would run every
 * call, with no compute rule); float16.
 */
public final class WinogradConv2d extends FunctionPass {
    public static final String NAME = "winograd-conv2d";
    private static final PassInfo INFO = new PassInfo(NAME, 3,
            "blocked 3x3 stride-1 convolutions with constant weights to Winograd F(4x4, 3x3)");

    /**
     * {@code enabled}: whether the pass rewrites when not forced; {@code tileSize}: m (2
     * or 4); the smallest channel count (in and out) and output side rewritten; {@code maxTransformBytes}: the largest
     * transformed input or GEMM result ({@code alpha^2 x tiles x channels} floats) rewritten.
     *
     * <p>The thresholds are measured (README, "Winograd convolutions"; a 2-core AMD EPYC, 32 MiB L3): at 7x7 (resnet50's
     * 512 channels) the transformed weight, 4x the direct one, makes the kernel memory-bound and no faster; at 224x224
     * with 64 channels (vgg19's first block) the 29 MiB transformed input and GEMM result spill the cache and the
     * kernel is 0.7x the direct one, while 112x112 with 128 channels (14 MiB) is 1.7-2x faster.
     */
    public record Options(boolean enabled, int tileSize, int minChannels, int minOutput, long maxTransformBytes) {
        public static final Options DEFAULT = new Options(true, 4, 32, 8, 16L << 20);

        public Options {
            if (!WinogradConv2D.tileSizeSupported(tileSize)) throw new IllegalArgumentException("tile size must be 2 or 4, got " + tileSize);
        }

        /** The defaults, rewriting when {@code on}. */
        public static Options enabled(boolean on) {
            return new Options(on, DEFAULT.tileSize(), DEFAULT.minChannels(), DEFAULT.minOutput(), DEFAULT.maxTransformBytes());
        }
    }

    private final Options options;

    public WinogradConv2d() {
        this(Options.DEFAULT);
    }

    public WinogradConv2d(Options options) {
        super(INFO);
        this.options = options;
    }

    private boolean active(PassContext context) {
        return options.enabled() || context.options().forced().contains(NAME);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        if (!active(context)) return function;
        ExprTypes types = new ExprTypes(context.types());
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                if (!(post instanceof Call c) || !(c.callee() instanceof Op op) || !op.name().equals(Conv2DNCHWc.NAME)) return post;
                Expr out = winograd(c, types);
                return out == null ? post : out;
            }
        }.rewrite(function.body()));
    }

    /** The Winograd form of {@code c}, or null when it does not qualify. */
    private Expr winograd(Call c, ExprTypes types) {
        Conv2DNCHWc.Conv2DNCHWcAttrs a = (Conv2DNCHWc.Conv2DNCHWcAttrs) OpRegistry.get(Conv2DNCHWc.NAME).parseAttrs(c.attrs());
        if (!(types.of(c.args().get(0)) instanceof TensorType x) || !(types.of(c.args().get(1)) instanceof TensorType w)) return null;
        if (!x.isStatic() || !w.isStatic() || x.rank() != 5 || w.rank() != 6 || !x.dtype().equals(DType.FLOAT32) || !w.dtype().equals(DType.FLOAT32)) return null;
        if (a.groups() != 1 || a.strides()[0] != 1 || a.strides()[1] != 1 || a.dilation()[0] != 1 || a.dilation()[1] != 1) return null;
        if (a.outDtype() != null && !a.outDtype().equals(DType.FLOAT32)) return null;
        int[] xs = x.staticShape(), ws = w.staticShape();
        int ib = xs[4], ob = ws[5];
        if (ws[2] != 3 || ws[3] != 3 || ws[4] != ib || ws[1] != xs[1]) return null;
        // blocks of whole 8-lane vectors only: the template's GEMM tile is measured on those (a 4-lane block is half a vector)
        if (ib % 8 != 0 || ob % 8 != 0) return null;
        if (!a.dataLayout().name().equals("NCHW" + ib + "c") || !a.kernelLayout().name().equals("OIHW" + ib + "i" + ob + "o")
                || !a.outLayout().name().equals("NCHW" + ob + "c")) return null;
        int in = xs[1] * ib, outC = ws[0] * ob;
        int oh = xs[2] + a.padding()[0] + a.padding()[2] - 2, ow = xs[3] + a.padding()[1] + a.padding()[3] - 2;
        if (in < options.minChannels() || outC < options.minChannels() || oh < options.minOutput() || ow < options.minOutput()) return null;
        if (!constant(c.args().get(1))) return null;
        int m = options.tileSize();
        long tiles = (long) xs[0] * ((oh + m - 1) / m) * ((ow + m - 1) / m);
        if ((long) (m + 2) * (m + 2) * tiles * Math.max(in, outC) * 4 > options.maxTransformBytes()) return null;
        Expr u = new Call(Op.get(WinogradConv2D.WEIGHT_TRANSFORM), List.of(c.args().get(1)),
                Attrs.of("tile_size", AttrValue.of(m)).with("kernel_layout", AttrValue.of(a.kernelLayout().name())), List.of(), c.span());
        Attrs attrs = Attrs.of("tile_size", AttrValue.of(m)).with("padding", AttrValue.ints(a.padding()[0], a.padding()[1], a.padding()[2], a.padding()[3]))
                .with("channels", AttrValue.of(outC)).with("data_layout", AttrValue.of(a.dataLayout().name()))
                .with("out_layout", AttrValue.of(a.outLayout().name()));
        return new Call(Op.get(WinogradConv2D.NAME), List.of(c.args().get(0), u), attrs, List.of(), c.span());
    }

    /**
     * Operator calls over constants only (a layout transform of a weight fold-scale-axis scaled): what fold-constant
     * turns into a constant.
     */
    private static boolean constant(Expr e) {
        if (e instanceof Constant) return true;
        return e instanceof Call c && c.callee() instanceof Op && c.args().stream().allMatch(WinogradConv2d::constant);
    }
}
