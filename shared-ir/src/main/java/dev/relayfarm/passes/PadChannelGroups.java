package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Grouped convolutions whose groups no full vector divides (ShuffleNet v1: 4 groups of 34 or 68 channels) run on
 * channels padded group by group with zeros up to a multiple of the vector: each group of {@code c} channels becomes
 * {@code c'} with {@code c' - c} zero channels at its end ({@link Padding}). alter-op-layout then blocks the padded
 * convolution group by group in full vectors: 34-channel groups were ungrouped (four times the work, canonicalize-ops)
 * and 68-channel ones ran in half vectors.
 * <pre>
 * nn.conv2d(%x: (N, G*C, H, W), %w: (G*O, C, KH, KW), groups=G)
 *   ==> unpad(nn.conv2d(pad(%x), pad(%w) with zero filters and zero input channels, groups=G, channels=G*O'))
 * pad(%x)    = reshape(nn.pad(reshape(%x, [N, G, C, H, W]), 0f, pad_width=[.., [0, C'-C], ..]), [N, G*C', H, W])
 * unpad(%y)  = reshape(strided_slice(reshape(%y, [N, G, O', H, W]), end=[N, G, O, H, W]), [N, G*O, H, W])
 * </pre>
 * The padded channels stay zero through the ops that map zero to zero (add and multiply with per-channel constants
 * padded with zeros, add of two padded values, relu, average and max pooling, a depthwise convolution with zero
 * filters), so a padded input is
 * taken from the padded convolution upstream through such ops rather than copied: {@code pad(relu(add(unpad(%y), %b)))}
 * is {@code relu(add(%y, pad(%b)))}. A ShuffleNet stage then runs in the padded channels from its first unit to its
 * last: the residual additions on padded values, the depthwise convolution on padded channels, and the channel
 * shuffle between unpad and pad (injective: it fuses into the depthwise convolution's padding stage,
 * {@link PaddedDataCopy}). Only the stage's input is copied into the padded channels and its output out of them.
 * Every value computed in the padded channels is replaced, for its other uses, by the unpadded view of its padded
 * form, so nothing is computed twice.
 *
 * <p>Only static float32 NCHW convolutions whose padded form does at most {@value #MAX_EXTRA_WORK} times the work.
 */
public final class PadChannelGroups extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("pad-channel-groups", 3,
            "grouped conv2d whose groups no vector divides: groups padded with zero channels, kept padded through element-wise ops and depthwise convolutions");

    /** The most work a padded convolution may do, relative to the convolution as it is. */
    static final double MAX_EXTRA_WORK = 1.6;

    public PadChannelGroups() {
        super(INFO);
    }

    /** {@code groups} groups of {@code channels} channels, each padded to {@code padded}. */
    record Padding(int groups, int channels, int padded) {
        int total() {
            return groups * channels;
        }

        int paddedTotal() {
            return groups * padded;
        }
    }

    /** A value (by identity: structurally equal expressions may be distinct nodes) and a padding. */
    private record Key(Expr e, Padding p) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.e == e && k.p.equals(p);
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(e) * 31 + p.hashCode();
        }
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        int b = context.options().target().channelBlocks().getLast();
        Rewrite r = new Rewrite(context.types(), b);
        List<Expr> order = ExprTraversal.postOrder(function.body());
        boolean any = false;
        for (Expr e : order) {
            r.original.put(e, true);
            if (e instanceof Call c && r.conv(c) != null) any = true;
        }
        if (!any) return function;
        // first every padded form (upstream first), then the body with each value that has one read through it
        for (Expr e : order) {
            Padding[] conv = e instanceof Call c ? r.conv(c) : null;
            if (conv != null) r.paddedForm(e, conv[1]);
        }
        // then the per-channel ops after padded values that no padded consumer asked for (a bias and relu before a
        // shuffle, the last residual addition of a stage, the pooling of a stage's output), where that needs no copy:
        // a convolution computes them in its tile, a pooling runs blocked, and the value is unpadded after them
        r.copies(false);
        for (Expr e : order) {
            if (!(e instanceof Call c) || !(c.callee() instanceof Op op) || !PER_CHANNEL.contains(op.name())) continue;
            for (Expr a : c.args()) {
                Padding p = r.paddingOf(a);
                if (p != null) {
                    r.derived(c, p);
                    break;
                }
            }
        }
        // upstream first, so each node's rewrite finds its arguments' done: no recursion down a long graph
        for (Expr e : order) r.real(e);
        return function.withBody(r.real(function.body()));
    }

    /** The per-channel ops whose padded form keeps the padded channels zero (given padded operands or zero-padded constants). */
    private static final Set<String> PER_CHANNEL = Set.of("nn.relu", "add", "multiply", "nn.avg_pool2d", "nn.max_pool2d");

    private static final class Rewrite {
        private final InferResult types;
        private final int block;
        /** Padded forms built from padded inputs (not copies), by value and padding. */
        private final Map<Key, Expr> padded = new HashMap<>();
        /** The first padded form of each value that has one, and its padding: what the value's other uses read, unpadded. */
        private final Map<Expr, Key> paddedOf = new IdentityHashMap<>();
        private final Map<Expr, Expr> realMemo = new IdentityHashMap<>();
        private final Map<Expr, Boolean> visiting = new IdentityHashMap<>();
        private final Map<Expr, Expr> builtMemo = new IdentityHashMap<>();
        /** Copies of values that have no padded form, one per value and padding. */
        private final Map<Key, Expr> copies = new HashMap<>();
        private boolean copying = true;
        /** The function's own nodes (the rest were built here). */
        final Map<Expr, Boolean> original = new IdentityHashMap<>();

        Rewrite(InferResult types, int block) {
            this.types = types;
            this.block = block;
        }

        private TensorType tensor(Expr e) {
            Type t = types.typeOf(e);
            return t instanceof TensorType tt && tt.isStatic() && tt.rank() == 4 && tt.dtype().equals(DType.FLOAT32) ? tt : null;
        }

        /** The input and output paddings of a convolution this pass pads, or null. */
        Padding[] conv(Call c) {
            if (!(c.callee() instanceof Op op) || !op.name().equals("nn.conv2d") || c.args().size() != 2) return null;
            Conv2D.Conv2DAttrs a = (Conv2D.Conv2DAttrs) OpRegistry.get("nn.conv2d").parseAttrs(c.attrs());
            int g = a.groups();
            if (g < 2 || block < 2) return null;
            if (!a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("OIHW") || !a.outLayout().name().equals("NCHW")) return null;
            if (a.outDtype() != null && !a.outDtype().equals(DType.FLOAT32)) return null;
            TensorType x = tensor(c.args().get(0)), w = tensor(c.args().get(1)), y = tensor(c);
            if (x == null || w == null || y == null) return null;
            int[] ws = w.staticShape();
            int inG = ws[1], outG = ws[0] / g;
            if (inG < 2 || x.staticShape()[1] != inG * g || inG % block == 0 && outG % block == 0) return null;
            int inP = roundUp(inG, block), outP = roundUp(outG, block);
            if ((double) inP * outP > MAX_EXTRA_WORK * inG * outG) return null;
            return new Padding[] {new Padding(g, inG, inP), new Padding(g, outG, outP)};
        }

        /** {@code e} (an original expression) with its uses rewritten: a value that has a padded form reads it unpadded. */
        Expr real(Expr e) {
            Expr done = realMemo.get(e);
            if (done != null) return done;
            Key k = paddedOf.get(e);
            Expr out = k != null && padded.get(k) != null ? unpad(rebuilt(padded.get(k)), k.p(), tensor(e)) : ExprRewriter.withChildren(e, this::real);
            realMemo.put(e, out);
            return out;
        }

        /** A node this pass built, its original arguments rewritten by {@link #real}. */
        private Expr rebuilt(Expr e) {
            if (original.containsKey(e)) return real(e);
            Expr done = builtMemo.get(e);
            if (done != null) return done;
            Expr out = ExprRewriter.withChildren(e, this::rebuilt);
            builtMemo.put(e, out);
            return out;
        }

        /** {@code e}'s padded form built from padded inputs (built now if it can be), or null when it has none. */
        Expr derived(Expr e, Padding p) {
            Key k = new Key(e, p);
            if (padded.containsKey(k)) return padded.get(k);
            if (visiting.containsKey(e)) return null;
            visiting.put(e, true);
            Expr d = build(e, p);
            visiting.remove(e);
            padded.put(k, d);
            if (d != null) paddedOf.putIfAbsent(e, k);
            return d;
        }

        /** {@code e} in padded channels: derived when it can be, else a copy of it with zero channels inserted. */
        Expr paddedForm(Expr e, Padding p) {
            Expr d = derived(e, p);
            if (d != null || !copying) return d;
            return copies.computeIfAbsent(new Key(e, p), k -> pad(e, p, tensor(e)));
        }

        /** Whether a value that has no padded form may be copied into padded channels (else it has none). */
        void copies(boolean allowed) {
            copying = allowed;
        }

        /** The padding of {@code e}'s padded form, or null when it has none. */
        Padding paddingOf(Expr e) {
            Key k = paddedOf.get(e);
            return k == null || padded.get(k) == null ? null : k.p();
        }

        private Expr build(Expr e, Padding p) {
            TensorType t = tensor(e);
            if (t == null || t.staticShape()[1] != p.total() || !(e instanceof Call c) || !(c.callee() instanceof Op op)) return null;
            Padding[] conv = conv(c);
            if (conv != null) {
                if (!conv[1].equals(p)) return null;
                int[] ws = tensor(c.args().get(1)).staticShape();
                Padding in = conv[0];
                Expr weight = reshape(zeroPad(reshape(c.args().get(1), p.groups(), p.channels(), in.channels(), ws[2], ws[3]),
                        new int[][] {{0, 0}, {0, p.padded() - p.channels()}, {0, in.padded() - in.channels()}, {0, 0}, {0, 0}}), p.paddedTotal(), in.padded(), ws[2], ws[3]);
                Expr data = paddedForm(c.args().get(0), in);
                if (data == null) return null;
                return new Call(c.callee(), List.of(data, weight), c.attrs().with("channels", AttrValue.of((long) p.paddedTotal())), List.of(), c.span());
            }
            switch (op.name()) {
                case "nn.avg_pool2d", "nn.max_pool2d" -> {
                    // per channel, and a window of zeros averages or maximizes to zero
                    boolean nchw = c.attrs().get("layout").map(v -> v.equals(AttrValue.of("NCHW"))).orElse(true)
                            && c.attrs().get("out_layout").map(v -> v.equals(AttrValue.of("")) || v.equals(AttrValue.of("NCHW"))).orElse(true);
                    Expr a = nchw ? derived(c.args().getFirst(), p) : null;
                    return a == null ? null : new Call(c.callee(), List.of(a), c.attrs(), List.of(), c.span());
                }
                case "nn.relu" -> {
                    Expr a = derived(c.args().getFirst(), p);
                    return a == null ? null : new Call(c.callee(), List.of(a), c.attrs(), List.of(), c.span());
                }
                case "add", "multiply" -> {
                    // zero stays zero: both sides padded (an addition), or one side padded and the other a per-channel
                    // constant whose padded channels are zero
                    Expr x = c.args().get(0), y = c.args().get(1);
                    Expr px = sameShape(x, t) ? derived(x, p) : null, py = sameShape(y, t) ? derived(y, p) : null;
                    if (px != null && py != null) return new Call(c.callee(), List.of(px, py), c.attrs(), List.of(), c.span());
                    if (px != null && perChannel(y, p) != null) return new Call(c.callee(), List.of(px, perChannel(y, p)), c.attrs(), List.of(), c.span());
                    if (py != null && perChannel(x, p) != null) return new Call(c.callee(), List.of(perChannel(x, p), py), c.attrs(), List.of(), c.span());
                    if (!op.name().equals("add")) return null;
                    // an addition of a padded value and one copied into padded channels
                    Expr cx = px == null && py != null && sameShape(x, t) ? paddedForm(x, p) : px;
                    Expr cy = py == null && px != null && sameShape(y, t) ? paddedForm(y, p) : py;
                    return cx != null && cy != null ? new Call(c.callee(), List.of(cx, cy), c.attrs(), List.of(), c.span()) : null;
                }
                case "nn.conv2d" -> {
                    // a depthwise convolution: zero filters for the padded channels
                    Conv2D.Conv2DAttrs a = (Conv2D.Conv2DAttrs) OpRegistry.get("nn.conv2d").parseAttrs(c.attrs());
                    TensorType w = tensor(c.args().get(1));
                    if (w == null || a.groups() != p.total() || w.staticShape()[0] != p.total() || w.staticShape()[1] != 1
                            || !a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("OIHW") || !a.outLayout().name().equals("NCHW")
                            || a.outDtype() != null && !a.outDtype().equals(DType.FLOAT32)) return null;
                    int[] ws = w.staticShape();
                    Expr weight = reshape(zeroPad(reshape(c.args().get(1), p.groups(), p.channels(), 1, ws[2], ws[3]),
                            new int[][] {{0, 0}, {0, p.padded() - p.channels()}, {0, 0}, {0, 0}, {0, 0}}), p.paddedTotal(), 1, ws[2], ws[3]);
                    Expr data = paddedForm(c.args().getFirst(), p);
                    if (data == null) return null;
                    return new Call(c.callee(), List.of(data, weight),
                            c.attrs().with("groups", AttrValue.of((long) p.paddedTotal())).with("channels", AttrValue.of((long) p.paddedTotal())), List.of(), c.span());
                }
                default -> {
                    return null;
                }
            }
        }

        private boolean sameShape(Expr e, TensorType t) {
            TensorType u = tensor(e);
            return u != null && u.shape().equals(t.shape());
        }

        /** A per-channel constant ({@code [C, 1, 1]} or {@code [1, C, 1, 1]}) padded with zero channels, or null. */
        private Expr perChannel(Expr e, Padding p) {
            if (!(e instanceof Constant k) || !k.data().dtype().equals(DType.FLOAT32)) return null;
            int[] s = k.data().shape();
            boolean chw = s.length == 3 && s[0] == p.total() && s[1] == 1 && s[2] == 1;
            boolean nchw = s.length == 4 && s[0] == 1 && s[1] == p.total() && s[2] == 1 && s[3] == 1;
            if (!chw && !nchw) return null;
            Expr split = reshape(e, p.groups(), p.channels());
            Expr z = zeroPad(split, new int[][] {{0, 0}, {0, p.padded() - p.channels()}});
            return chw ? reshape(z, p.paddedTotal(), 1, 1) : reshape(z, 1, p.paddedTotal(), 1, 1);
        }

        private static Expr pad(Expr e, Padding p, TensorType t) {
            int[] s = t.staticShape();
            Expr split = reshape(e, s[0], p.groups(), p.channels(), s[2], s[3]);
            return reshape(zeroPad(split, new int[][] {{0, 0}, {0, 0}, {0, p.padded() - p.channels()}, {0, 0}, {0, 0}}), s[0], p.paddedTotal(), s[2], s[3]);
        }

        private static Expr unpad(Expr e, Padding p, TensorType t) {
            int[] s = t.staticShape();
            Expr groups = reshape(e, s[0], p.groups(), p.padded(), s[2], s[3]);
            Expr kept = new Call(Op.get("strided_slice"), List.of(groups),
                    Attrs.of("begin", AttrValue.ints(0, 0, 0, 0, 0)).with("end", AttrValue.ints(s[0], p.groups(), p.channels(), s[2], s[3])), List.of(), Span.NONE);
            return reshape(kept, s[0], s[1], s[2], s[3]);
        }
    }

    private static int roundUp(int v, int b) {
        return (v + b - 1) / b * b;
    }

    private static Expr reshape(Expr e, long... shape) {
        return new Call(Op.get("reshape"), List.of(e), Attrs.of("newshape", AttrValue.ints(shape)), List.of(), Span.NONE);
    }

    private static Expr zeroPad(Expr e, int[][] width) {
        List<AttrValue> rows = new ArrayList<>();
        for (int[] r : width) rows.add(AttrValue.ints(r[0], r[1]));
        Expr zero = new Constant(NDArray.wrap(DType.FLOAT32, new int[0], new float[] {0}));
        return new Call(Op.get("nn.pad"), List.of(e, zero), Attrs.of("pad_width", new AttrValue.ListValue(rows)), List.of(), Span.NONE);
    }
}
