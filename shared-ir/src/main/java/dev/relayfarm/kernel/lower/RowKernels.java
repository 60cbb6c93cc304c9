package dev.relayfarm.kernel.lower;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.Evaluate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Kernels for fused groups whose tensors have a dynamic leading dimension (a batch or row count, {@code Tensor[(?, 784)]}):
 * compiled once, they run for any number of rows. The first slice of issue 19's symbolic-shape kernels.
 *
 * <p>How: a group is <em>row-separable</em> when each row of its results depends only on the same row of its row-carrying
 * inputs (element-wise and broadcast ops, dense on rows, convolutions and pooling over a batch, softmax or a reduction
 * over another axis, reshapes and transposes that keep the rows first). Such a group is lowered twice by the ordinary
 * template pipeline ({@link PrimitiveLowering}) with the dynamic dimension pinned: to {@value #BLOCK} rows and to one.
 * The kernel runs the {@value #BLOCK}-row body over each whole block and the one-row body over the remaining rows (the
 * residue), each reading and writing its rows in place: row-major tensors keep a row's elements together, so a row's
 * offset is its index times the row's size and only the first index of each access moves. The row count comes as one
 * more input, an int64 tensor whose element 0 it is (the shape of a row-carrying input, as the VM's ShapeOf gives it).
 *
 * <p>Why not symbolic extents in the tensor-expression layer: its templates choose tiles from static extents, and
 * every rule of them would need a symbolic form; a row-separable group keeps all of them static and is most of what
 * a dynamic batch needs. Dynamic dimensions elsewhere (a sequence length inside attention, an image width) are not
 * covered: {@link #check} names the operator that stops a group.
 */
public final class RowKernels {
    /** Rows of the block body: enough for the dense and convolution templates' register tiles over rows. */
    static final int BLOCK = 8;

    private RowKernels() {}

    /**
     * The row kernel of {@code primitive}, named {@code name}: its parameters are the group's inputs, then the row count
     * (int64, element 0), then its results; a dynamic tensor's parameter has one row in the signature (the least it may
     * be given). A group that is not row-separable is an {@link UnsupportedOperationException} naming the reason.
     */
    public static LoweredKernel lower(Function primitive, String name, Target target) {
        Set<Integer> rowed = check(primitive, name);
        LoweredKernel block = PrimitiveLowering.lower(pinRows(primitive, BLOCK), name, target, Optional.empty());
        LoweredKernel one = PrimitiveLowering.lower(pinRows(primitive, 1), name, target, Optional.empty());
        List<Buffer> params = one.func().params();
        int inputs = one.func().numInputs();
        Buffer rows = Buffer.of("rows", List.of(1), DType.INT64);
        PrimExpr n = new Load(rows, List.of(PrimExpr.of(0)));
        dev.relayfarm.kernel.expr.Var b = dev.relayfarm.kernel.expr.Var.index("row_block"), r = dev.relayfarm.kernel.expr.Var.index("row");
        PrimExpr blocks = n.div(BLOCK);
        Stmt blockLoop = new For(b, PrimExpr.of(0), blocks, ForKind.SERIAL,
                shiftRows(block.func(), params, rowed, b.mul(BLOCK)));
        Stmt restLoop = new For(r, blocks.mul(BLOCK), n.sub(blocks.mul(BLOCK)), ForKind.SERIAL, shiftRows(one.func(), params, rowed, r));
        List<Buffer> all = new ArrayList<>(params.subList(0, inputs));
        all.add(rows);
        all.addAll(params.subList(inputs, params.size()));
        LoweredFunc func = new LoweredFunc(name, all, inputs + 1, Seq.of(List.of(blockLoop, restLoop)));
        List<TensorSpec> specs = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            Buffer p = all.get(i);
            int kernelIndex = i < inputs ? i : i == inputs ? -1 : i - 1; // position among the group's own tensors; -1: the row count
            List<Integer> shape = new ArrayList<>(p.shape());
            if (kernelIndex >= 0 && rowed.contains(kernelIndex)) shape.set(0, TensorSpec.DYNAMIC);
            specs.add(new TensorSpec(p.name(), shape, p.dtype()));
        }
        return new LoweredKernel(func, new KernelSignature(name, specs, inputs + 1), one.workload() + " rows=?", one.config());
    }

    /** {@code primitive} with every dynamic leading dimension of its parameters pinned to {@code rows}. */
    static Function pinRows(Function primitive, int rows) {
        return retypeParams(primitive, t -> pin(t, rows));
    }

    /** {@code primitive} with each parameter declared again with type {@code retype} of its annotation, the body using the new ones. */
    static Function retypeParams(Function primitive, java.util.function.UnaryOperator<Type> retype) {
        Map<Var, Var> renamed = new IdentityHashMap<>();
        List<Var> params = new ArrayList<>();
        for (Var p : primitive.params()) {
            Var q = Var.fresh(p.name(), retype.apply(p.annotation()), p.span());
            renamed.put(p, q);
            params.add(q);
        }
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return post instanceof Var v && renamed.containsKey(v) ? renamed.get(v) : post;
            }
        }.rewrite(primitive.body());
        return new Function(params, body, null, primitive.typeParams(), primitive.attrs(), primitive.span());
    }

    private static Type pin(Type t, int rows) {
        return switch (t) {
            case TensorType tt when !tt.shape().isEmpty() && tt.shape().getFirst() instanceof Dim.Any -> {
                List<Dim> dims = new ArrayList<>(tt.shape());
                dims.set(0, Dim.of(rows));
                yield new TensorType(dims, tt.dtype());
            }
            case TupleType tt -> new TupleType(tt.fields().stream().map(f -> pin(f, rows)).toList());
            case null, default -> t;
        };
    }

    /**
     * The shape function of a row kernel's results (the dissertation's data-independent kind, compiled like any kernel):
     * a Primitive function of the shape of a row-carrying input ({@code rankIn} int64s, the row count first) that gives,
     * for each result type of {@code results} (leading dimension dynamic, the rest static), the result's shape and its
     * byte size, both int64 vectors ({@code [rows, d1, ...]} and {@code [rows * bytes of a row]}), in that order.
     */
    public static Function shapeFunction(int rankIn, List<TensorType> results) {
        Var shape = Var.fresh("shape", TensorType.of(DType.INT64, rankIn));
        Expr rows = new Call(dev.relayfarm.ir.Op.get("strided_slice"), List.of(shape),
                dev.relayfarm.ir.Attrs.of("begin", AttrValue.ints(0)).with("end", AttrValue.ints(1)));
        List<Expr> fields = new ArrayList<>();
        for (TensorType t : results) {
            List<Dim> dims = t.shape();
            long rowElements = 1;
            long[] rest = new long[dims.size() - 1];
            for (int d = 1; d < dims.size(); d++) rowElements *= rest[d - 1] = dims.get(d).value();
            long rowBytes = rowElements * t.dtype().storageBytes() * t.dtype().lanes();
            Expr full = rest.length == 0 ? rows : new Call(dev.relayfarm.ir.Op.get("concatenate"),
                    List.of(new dev.relayfarm.ir.Tuple(List.of(rows, new dev.relayfarm.ir.Constant(dev.relayfarm.ir.NDArray.fromLongs(DType.INT64, new int[] {rest.length}, rest))))),
                    dev.relayfarm.ir.Attrs.of("axis", AttrValue.of(0)));
            fields.add(full);
            fields.add(Call.op("multiply", rows, new dev.relayfarm.ir.Constant(dev.relayfarm.ir.NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {rowBytes}))));
        }
        return new Function(List.of(shape), new dev.relayfarm.ir.Tuple(fields)).withAttrs(dev.relayfarm.ir.Attrs.of(Function.PRIMITIVE, AttrValue.of(1)));
    }

    /** Operators whose rows stay apart when the tensors they take and give keep the rows first (checked on the types). */
    private static final Set<String> ROW_LOCAL = Set.of("nn.dense", "nn.conv2d", "nn.contrib_conv2d_NCHWc", "nn.contrib_conv2d_winograd_NCHWc",
            "nn.contrib_depthwise_conv2d_NCHWc", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d",
            "nn.adaptive_avg_pool2d", "nn.adaptive_max_pool2d", "nn.batch_flatten", "reshape", "transpose", "layout_transform", "squeeze",
            "expand_dims", "strided_slice", "concatenate", "nn.pad", "cast", "clip", "copy", "nn.batch_matmul", "nn.matmul");
    /** Operators that mix elements along their {@code axis} attribute: row-separable when it is not the rows'. */
    private static final Set<String> ALONG_AXIS = Set.of("nn.softmax", "nn.log_softmax", "nn.bias_add", "nn.layer_norm", "nn.batch_norm", "nn.lrn",
            "nn.l2_normalize", "sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance", "std", "logsumexp");

    /** Whether {@code primitive} is a row kernel's group ({@link #check} finds nothing against it). */
    public static boolean rowsStayApart(Function primitive) {
        try {
            check(primitive, "group");
            return true;
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * The positions, in kernel parameter order (inputs, then results; tuples flattened), of the tensors whose leading
     * dimension is the dynamic row count; a group whose rows do not stay apart is refused, naming the operator: the
     * dynamic dimensions must all be leading ones, every operator that reads rows must be one whose rows stay apart, and
     * with the rows pinned to 1, 7 and 11 every row-carrying value must keep exactly that many rows first (so no
     * reshape, transpose, concatenation or reduction moves or mixes them).
     */
    static Set<Integer> check(Function primitive, String name) {
        GroupTypes group = GroupTypes.of(primitive);
        InferResult types = group.types();
        Function fn = group.fn();
        List<TensorType> flat = group.flat();
        int inputs = group.inputs();
        for (TensorType t : flat) {
            for (int d = 1; d < t.shape().size(); d++) {
                if (!t.shape().get(d).isStatic()) {
                    throw new UnsupportedOperationException("group " + name + ": " + t + " is dynamic beyond its leading dimension (kernels take a dynamic row count only)");
                }
            }
            if (!t.shape().isEmpty() && !t.shape().getFirst().isStatic() && !(t.shape().getFirst() instanceof Dim.Any)) {
                throw new UnsupportedOperationException("group " + name + ": " + t + " has a symbolic leading dimension (only Any rows are supported)");
            }
        }
        Set<Integer> rowedAt = new HashSet<>();
        for (int i = 0; i < flat.size(); i++) if (!flat.get(i).shape().isEmpty() && flat.get(i).shape().getFirst() instanceof Dim.Any) rowedAt.add(i);
        if (rowedAt.stream().noneMatch(i -> i < inputs)) throw new UnsupportedOperationException("group " + name + ": no parameter carries the dynamic rows");
        for (int i = inputs; i < flat.size(); i++) {
            if (!rowedAt.contains(i)) {
                throw new UnsupportedOperationException("group " + name + ": result " + flat.get(i) + " does not carry the dynamic rows (every result of a row kernel must)");
            }
        }
        // which values carry rows: the dynamic parameters and everything built from one (a call, a tuple, a projection)
        Set<Expr> rowed = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Var p : fn.params()) if (types.typeOf(p) instanceof TensorType t && !t.shape().isEmpty() && t.shape().getFirst() instanceof Dim.Any) rowed.add(p);
        for (Expr e : ExprTraversal.postOrder(fn.body())) {
            switch (e) {
                case dev.relayfarm.ir.Tuple t -> {
                    if (t.fields().stream().anyMatch(rowed::contains)) rowed.add(t);
                }
                case dev.relayfarm.ir.TupleGetItem g -> {
                    if (rowed.contains(g.tuple())) rowed.add(g);
                }
                case Call c when c.args().stream().anyMatch(rowed::contains) -> {
                    if (!(c.callee() instanceof Op op)) throw new UnsupportedOperationException("group " + name + ": a call of " + c.callee() + " in a fused group");
                    rowed.add(c);
                    int rank = types.typeOf(c.args().getFirst()) instanceof TensorType t ? t.shape().size()
                            : types.typeOf(c.args().getFirst()) instanceof TupleType tt && !tt.fields().isEmpty() && tt.fields().getFirst() instanceof TensorType t0
                            ? t0.shape().size() : 0;
                    String why = rowLocal(op.name(), c, rank);
                    if (why != null) throw new UnsupportedOperationException("group " + name + ": " + op.name() + " " + why + " (a kernel over dynamic rows needs its rows kept apart)");
                }
                default -> {}
            }
        }
        // 1 too: the one-row body is compiled from that pinning, and an operator may treat a size of one apart
        for (int rows : new int[] {1, 7, 11}) {
            InferResult pinned = TypeInference.inferExpr(pinRows(fn, rows), OpResolver.REGISTRY);
            Function pf = pinned.module().main().orElseThrow();
            List<Expr> pinnedNodes = ExprTraversal.postOrder(pf.body()), nodes = ExprTraversal.postOrder(fn.body());
            if (pinnedNodes.size() != nodes.size()) throw new IllegalStateException("pinning the rows of group " + name + " changed its form");
            for (int i = 0; i < nodes.size(); i++) {
                if (!(nodes.get(i) instanceof Call c) || !rowed.contains(c)) continue;
                Type t = pinned.typeOf(pinnedNodes.get(i));
                List<TensorType> outs = new ArrayList<>();
                GroupTypes.flatten(t, outs);
                for (TensorType o : outs) {
                    if (o.shape().isEmpty() || !(o.shape().getFirst() instanceof Dim.Int(long v)) || v != rows) {
                        throw new UnsupportedOperationException("group " + name + ": " + ((Op) c.callee()).name() + " gives " + o + " from " + rows
                                + " rows (its result must keep the rows first, one for one)");
                    }
                }
            }
        }
        return rowedAt;
    }

    /** The axis an operator of {@link #ALONG_AXIS} works along when its call does not say. */
    private static final Map<String, Long> DEFAULT_AXIS = Map.of("nn.softmax", -1L, "nn.log_softmax", -1L, "nn.bias_add", 1L, "nn.layer_norm", -1L,
            "nn.batch_norm", 1L, "nn.lrn", 1L);

    /** Null when {@code op} keeps rows apart as called on a first argument of rank {@code rank}, else why not. */
    private static String rowLocal(String op, Call c, int rank) {
        if (ALONG_AXIS.contains(op)) {
            Optional<AttrValue> axis = c.attrs().get("axis");
            if ((axis.isEmpty() || axis.get() instanceof AttrValue.NoneValue) && DEFAULT_AXIS.containsKey(op)) axis = Optional.of(AttrValue.of(DEFAULT_AXIS.get(op)));
            if (axis.isEmpty() || axis.get() instanceof AttrValue.NoneValue) return "reduces over every axis, the rows' too";
            List<Long> axes = new ArrayList<>();
            switch (axis.get()) {
                case AttrValue.IntValue(long a) -> axes.add(a);
                case AttrValue.ListValue(List<AttrValue> vs) -> {
                    for (AttrValue v : vs) if (v instanceof AttrValue.IntValue(long a)) axes.add(a);
                }
                default -> {
                    return "has an axis attribute of an unexpected form";
                }
            }
            if (axes.isEmpty()) return "reduces over every axis, the rows' too";
            if (c.attrs().get("exclude").map(v -> v instanceof AttrValue.BoolValue(boolean x) && x).orElse(false)) return "reduces over all axes but the given ones";
            for (long a : axes) if ((a < 0 ? a + rank : a) == 0) return "works along axis 0, the rows";
            return null;
        }
        if (op.equals("strided_slice")) return sliceKeepsRows(c, rank);
        if (ROW_LOCAL.contains(op)) return null; // whether the rows stay first, one for one, the pinned types say

        OpPattern pattern = OpRegistry.find(op).map(d -> d.pattern()).orElse(OpPattern.OPAQUE);
        if (pattern == OpPattern.ELEMWISE || pattern == OpPattern.BROADCAST) return null;
        return "is not known to keep rows apart";
    }

    /**
     * Null when a {@code strided_slice} takes every row in order (axis 0 untouched, or begun at 0 with stride 1: how many
     * rows it keeps, the pinned types check), else why not. A reversed or strided slice of the rows keeps their count and
     * would still mix them.
     */
    private static String sliceKeepsRows(Call c, int rank) {
        List<Long> axes = longs(c, "axes");
        int at = 0;
        if (axes != null) {
            at = -1;
            for (int i = 0; i < axes.size(); i++) if ((axes.get(i) < 0 ? axes.get(i) + rank : axes.get(i)) == 0) at = i;
            if (at < 0) return null;
        }
        List<Long> begin = longs(c, "begin"), strides = longs(c, "strides");
        if (begin != null && begin.size() > at && begin.get(at) != 0) return "slices the rows from " + begin.get(at);
        if (strides != null && strides.size() > at && strides.get(at) != 1) return "slices the rows with stride " + strides.get(at);
        return null;
    }

    /** An integer-list attribute ({@code null} when absent or None). */
    private static List<Long> longs(Call c, String key) {
        Optional<AttrValue> v = c.attrs().get(key);
        if (v.isEmpty() || !(v.get() instanceof AttrValue.ListValue(List<AttrValue> vs))) return null;
        List<Long> out = new ArrayList<>();
        for (AttrValue x : vs) out.add(x instanceof AttrValue.IntValue(long i) ? i : Long.MIN_VALUE);
        return out;
    }

    /**
     * The body of {@code f}, lowered with a fixed number of rows, over the kernel's {@code params} (matched by position)
     * and with every access to a row-carrying parameter moved {@code offset} rows down.
     */
    private static Stmt shiftRows(LoweredFunc f, List<Buffer> params, Set<Integer> rowed, PrimExpr offset) {
        Map<Long, Buffer> swap = new HashMap<>();
        Set<Long> moved = new HashSet<>();
        for (int i = 0; i < params.size(); i++) {
            Buffer own = f.params().get(i);
            swap.put(own.id(), params.get(i));
            if (rowed.contains(i)) moved.add(own.id());
        }
        return stmt(f.body(), swap, moved, offset);
    }

    private static List<PrimExpr> indices(Buffer own, List<PrimExpr> idx, Set<Long> moved, PrimExpr offset) {
        if (!moved.contains(own.id())) return idx;
        List<PrimExpr> out = new ArrayList<>(idx);
        out.set(0, idx.getFirst().add(offset));
        return out;
    }

    private static PrimExpr expr(PrimExpr e, Map<Long, Buffer> swap, Set<Long> moved, PrimExpr offset) {
        return PrimExprs.map(e, x -> x instanceof Load l && swap.containsKey(l.buffer().id())
                ? new Load(swap.get(l.buffer().id()), indices(l.buffer(), l.indices(), moved, offset)) : x);
    }

    private static Stmt stmt(Stmt s, Map<Long, Buffer> swap, Set<Long> moved, PrimExpr offset) {
        return switch (s) {
            case For f -> new For(f.var(), expr(f.min(), swap, moved, offset), expr(f.extent(), swap, moved, offset), f.kind(), stmt(f.body(), swap, moved, offset));
            case Store st -> {
                Buffer b = swap.getOrDefault(st.buffer().id(), st.buffer());
                List<PrimExpr> idx = st.indices().stream().map(i -> expr(i, swap, moved, offset)).toList();
                yield new Store(b, indices(st.buffer(), idx, moved, offset), expr(st.value(), swap, moved, offset));
            }
            case Allocate a -> new Allocate(a.buffer(), a.scope(), stmt(a.body(), swap, moved, offset), a.elements());
            case IfThenElse i -> new IfThenElse(expr(i.condition(), swap, moved, offset), stmt(i.then(), swap, moved, offset),
                    i.otherwise().map(o -> stmt(o, swap, moved, offset)));
            case Seq q -> Seq.of(q.stmts().stream().map(x -> stmt(x, swap, moved, offset)).toList());
            case Evaluate ev -> new Evaluate(expr(ev.value(), swap, moved, offset));
        };
    }
}
