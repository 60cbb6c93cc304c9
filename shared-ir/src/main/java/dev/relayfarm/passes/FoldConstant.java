package dev.relayfarm.passes;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.InterpreterException;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.ops.transform.ShapeOf;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Evaluates constant sub-expressions at compile time with the reference {@link Interpreter}, as TVM's
 * FoldConstant does:
 *
 * <ul>
 *   <li>an operator call whose arguments are all constants (or tuples of constants) becomes a
 *       {@link Constant} (a tuple of constants when the operator returns a tuple, e.g. {@code split});
 *   <li>{@code shape_of(x)} becomes a constant when {@code x}'s type has a static shape and evaluating
 *       {@code x} has no effect, even if {@code x} itself is not constant;
 *   <li>a let binding of a constant (or a tuple of constants) is inlined into its uses and dropped;
 *   <li>{@code (a, b, c).1} becomes {@code b} when the dropped fields have no effects;
 *   <li>{@code if (True) a else b} becomes {@code a}.
 * </ul>
 *
 * <pre>
 * def @main(%x: Tensor[(2), float32]) { add(%x, multiply(2f, 3f)) }
 *   ==>  def @main(%x: Tensor[(2), float32]) { add(%x, 6f) }
 * </pre>
 *
 * Size cap: no constant above {@link Options#maxElements} elements is created, unless it is no
 * larger than a constant the call reads: transforming a weight (layout_transform, transpose, a
 * per-channel scale) replaces a large constant rather than adding one, and leaving it unfolded would
 * redo the transform at every run (a Winograd weight transform, 4x its weight, is folded up to
 * {@link Options#maxEvalElements}: it has no kernel). A call whose result would grow the program (a {@code zeros} of a
 * huge shape) stays an expression, but is still known to be
 * constant, so a consumer that is small enough (e.g. {@code sum} of it) is folded, evaluating the
 * large intermediate only transiently; {@link Options#maxEvalElements} bounds what such an
 * evaluation may allocate in all.
 *
 * <p>Not done: calls of functions (global, local, literal, even pure ones) are never folded, only
 * operator calls (function bodies are folded on their own); effects ({@code ref}, {@code ref_read},
 * {@code ref_write}) are never evaluated, dropped or reordered; an operator call whose evaluation
 * fails (e.g. an index out of bounds) is left to fail at run time; constants bound by {@code match}
 * are not propagated.
 */
public final class FoldConstant extends FunctionPass {
    /**
     * @param maxElements the largest constant (elements, summed over a tuple's fields) the pass creates
     * @param maxEvalElements the most elements one folding evaluation may produce, counting the large
     *     intermediates it evaluates on the way
     */
    private static final System.Logger LOG = System.getLogger("fold-constant");

    /**
     * The interpreter's budgets for one folding evaluation (one operator call): its results may not
     * exceed what {@link Options#maxEvalElements} allows in 8-byte elements, and it may not take more
     * than 1 M steps — an optimizer stage never hangs or runs out of memory on a constant subgraph; a
     * call over budget simply stays an expression. No wall-clock budget: what folds must not depend on
     * the machine's load (the -O3 module and the artifact's content hash would).
     */
    static dev.relayfarm.interp.InterpreterOptions budget(Options options) {
        return new dev.relayfarm.interp.InterpreterOptions(1_000_000, null, 10_000,
                Math.min(dev.relayfarm.interp.InterpreterOptions.DEFAULT_MAX_TENSOR_BYTES, options.maxEvalElements() * 8));
    }

    public record Options(long maxElements, long maxEvalElements) {
        public static final Options DEFAULT = new Options(1L << 20, 1L << 26);

        public Options {
            if (maxElements < 1 || maxEvalElements < maxElements) {
                throw new IllegalArgumentException("need 1 <= maxElements <= maxEvalElements, got " + maxElements + ", " + maxEvalElements);
            }
        }
    }

    private static final PassInfo INFO = new PassInfo("fold-constant", 2,
            "evaluates constant sub-expressions (operator calls over constants, shape_of of static shapes)");

    private final Options options;

    public FoldConstant() {
        this(Options.DEFAULT);
    }

    public FoldConstant(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        return function.withBody(new Folder(options, context.types(), letValues(function)).rewrite(function.body()));
    }

    /** Each let-bound variable of {@code function} and the (original) value it is bound to. */
    private static Map<Var, Expr> letValues(Function function) {
        Map<Var, Expr> out = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(function)) {
            if (e instanceof Let l) out.put(l.var(), l.value());
        }
        return out;
    }

    /** One run's rewriter. Post-order: a let's value is rewritten before any use of its variable. */
    private static final class Folder extends ExprRewriter {
        private final Options options;
        private final InferResult types;
        private final Map<Var, Expr> letValues;
        /** Original node -> its rewritten form. */
        private final Map<Expr, Expr> done = new IdentityHashMap<>();
        /** Rewritten node -> the original node it stands for (whose type is in the type table). */
        private final Map<Expr, Expr> origin = new IdentityHashMap<>();
        /**
         * Rewritten nodes that are constant but too large to materialize, with the elements evaluating
         * them allocates (their own and those of the deferred nodes under them).
         */
        private final Map<Expr, Long> deferred = new IdentityHashMap<>();
        private final Purity purity = Purity.local();

        Folder(Options options, InferResult types, Map<Var, Expr> letValues) {
            this.options = options;
            this.types = types;
            this.letValues = letValues;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            purity.isPure(post);
            origin.putIfAbsent(post, pre);
            Expr out = fold(pre, post);
            if (out != post) {
                judgeFresh(out);
                origin.putIfAbsent(out, pre);
            }
            done.put(pre, out);
            return out;
        }

        private Expr fold(Expr pre, Expr post) {
            return switch (post) {
                case Var v -> {
                    Expr bound = letValues.get(v);
                    Expr value = bound == null ? null : done.get(bound);
                    yield value != null && isConstant(value) ? value : v;
                }
                // Every use of the variable was replaced above, so the binding is dead.
                case Let l -> isConstant(l.value()) ? l.body() : l;
                case If i -> i.cond() instanceof Constant c && c.data().rank() == 0 && c.data().dtype().equals(DType.BOOL)
                        ? (c.data().getBoolean(0) ? i.thenBranch() : i.elseBranch()) : i;
                case TupleGetItem t -> t.tuple() instanceof Tuple tuple && othersPure(tuple, t.index()) ? tuple.fields().get(t.index()) : t;
                case Call c when c.callee() instanceof Op op -> foldCall(pre, c, op);
                default -> post;
            };
        }

        /**
         * Judges a folded result: fresh constants and tuples of them, whose other nodes (a kept
         * let body, a tuple field) are judged already, so this only descends into the fresh ones.
         */
        private void judgeFresh(Expr e) {
            if (purity.judged(e)) return;
            if (e instanceof Tuple t) {
                for (Expr f : t.fields()) judgeFresh(f);
            }
            purity.isPure(e);
        }

        private boolean othersPure(Tuple tuple, int keep) {
            for (int i = 0; i < tuple.fields().size(); i++) {
                if (i != keep && !purity.isPure(tuple.fields().get(i))) return false;
            }
            return true;
        }

        private Expr foldCall(Expr pre, Call call, Op op) {
            if (op.name().equals("shape_of")) {
                Expr shape = shapeOf(call);
                if (shape != null) return shape;
            }
            long deferredCost = 0;
            long largestRead = 0;
            for (Expr a : call.args()) {
                long c = constantCost(a);
                if (c < 0) return call;
                deferredCost += c;
                if (a instanceof Constant k) largestRead = Math.max(largestRead, k.data().elementCount());
            }
            long cap = Math.max(options.maxElements(), largestRead);
            long size = elements(types.types().get(pre));
            // a Winograd weight transform has no kernel: it exists to be folded (its result is (m+2)^2/9 times its input)
            if (op.name().equals(dev.relayfarm.ops.nn.WinogradConv2D.WEIGHT_TRANSFORM)) cap = Math.max(cap, Math.min(size, options.maxEvalElements()));
            if (size > cap) {
                // Too large to become a constant; a consumer may still fold it (evaluating it then).
                long cost = size + deferredCost;
                if (cost <= options.maxEvalElements()) deferred.put(call, cost);
                return call;
            }
            // An unknown size (Any dims: arange, argwhere) is checked on the evaluated result instead.
            if (deferredCost + Math.max(size, 0) > options.maxEvalElements()) return call;
            Value v;
            try {
                v = new Interpreter(IRModule.EMPTY, budget(options)).evaluate(call);
            } catch (InterpreterException e) {
                // An interrupt is the job being cancelled or the service stopping: stop optimizing, do not fold on.
                if (e.budget() == dev.relayfarm.interp.InterpreterOptions.Budget.INTERRUPTED) throw e;
                // A budget that ran out leaves the call unfolded, noted for --debug; any other failure
                // happens at run time too (e.g. an index out of bounds): leave it to do so there.
                if (e.budget() != null) LOG.log(System.Logger.Level.DEBUG, () -> "fold-constant: left " + call.callee() + " at " + call.span() + " unfolded: " + e.getMessage());
                return call;
            } catch (RuntimeException e) {
                return call;
            }
            if (elements(v) > cap) return call;
            Expr folded = toExpr(v, call.span());
            return folded == null ? call : folded;
        }

        /** {@code shape_of(x)} of a pure {@code x} with a static shape, as a constant; else null. */
        private Expr shapeOf(Call call) {
            Expr arg = call.args().getFirst();
            Expr argPre = origin.getOrDefault(arg, arg);
            if (!(types.types().get(argPre) instanceof TensorType t) || !t.isStatic() || !purity.isPure(arg)) return null;
            return shapeConstant(t, call.attrs(), call.span());
        }

        /**
         * 0 for a constant or a tuple of constants, the evaluation cost of a deferred (large constant)
         * expression, -1 for anything not known to be constant.
         */
        private long constantCost(Expr e) {
            if (e instanceof Constant) return 0;
            Long d = deferred.get(e);
            if (d != null) return d;
            if (e instanceof Tuple t) {
                long sum = 0;
                for (Expr f : t.fields()) {
                    long c = constantCost(f);
                    if (c < 0) return -1;
                    sum += c;
                }
                return sum;
            }
            return -1;
        }
    }

    /** The value of {@code shape_of(x, attrs)} for an {@code x} of static type {@code t}. */
    static Constant shapeConstant(TensorType t, dev.relayfarm.ir.Attrs attrs, Span span) {
        ShapeOf.ShapeOfAttrs a = (ShapeOf.ShapeOfAttrs) OpRegistry.get("shape_of").parseAttrs(attrs);
        int[] shape = t.staticShape();
        long[] values = new long[shape.length];
        for (int i = 0; i < shape.length; i++) values[i] = shape[i];
        return new Constant(NDArray.fromLongs(a.dtype(), new int[] {shape.length}, values), span);
    }

    /** A constant or a tuple (of tuples) of constants: what a let may inline freely. */
    static boolean isConstant(Expr e) {
        if (e instanceof Constant) return true;
        if (!(e instanceof Tuple t)) return false;
        for (Expr f : t.fields()) {
            if (!isConstant(f)) return false;
        }
        return true;
    }

    /** Elements of a tensor or (nested) tuple type with static shapes; -1 when unknown. */
    static long elements(Type type) {
        return switch (type) {
            case TensorType t -> {
                long n = 1;
                for (Dim d : t.shape()) {
                    if (!(d instanceof Dim.Int(long v))) yield -1;
                    try {
                        n = Math.multiplyExact(n, v);
                    } catch (ArithmeticException overflow) {
                        yield Long.MAX_VALUE;
                    }
                }
                yield n;
            }
            case TupleType t -> {
                long n = 0;
                for (Type f : t.fields()) {
                    long k = elements(f);
                    if (k < 0) yield -1;
                    n = Math.min(Long.MAX_VALUE / 2, n + k);
                }
                yield n;
            }
            case null, default -> -1;
        };
    }

    private static long elements(Value v) {
        return switch (v) {
            case TensorValue t -> t.data().size();
            case TupleValue t -> t.fields().stream().mapToLong(FoldConstant::elements).sum();
            default -> Long.MAX_VALUE;
        };
    }

    /** A tensor as a constant, a tuple of tensors as a tuple of constants; null for other values. */
    private static Expr toExpr(Value v, Span span) {
        return switch (v) {
            case TensorValue t -> new Constant(t.data(), span);
            case TupleValue t -> {
                List<Expr> fields = new ArrayList<>();
                for (Value f : t.fields()) {
                    Expr e = toExpr(f, Span.NONE);
                    if (e == null) yield null;
                    fields.add(e);
                }
                yield new Tuple(fields, span);
            }
            default -> null;
        };
    }
}
