package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * If-conversion: an {@code if} whose two branches are cheap, effect-free dataflow of static tensor types
 * becomes a select, {@code where(cond, then, else)} (one per field of a tuple result), so that the graph
 * executor, which runs dataflow only, can run it. Both branches are then computed and one is kept, so a
 * branch qualifies only when computing it is harmless and cheap:
 * <ul>
 *   <li>it is made of variables, constants, tuples, projections, lets and calls of operators whose
 *       pattern is element-wise, broadcast or injective (no reductions, no opaque operators, no function
 *       literals or calls of functions, no references, no nested {@code if} left);</li>
 *   <li>no integer division or remainder (division by zero traps in C, where the untaken branch would
 *       still run);</li>
 *   <li>at most {@link Options#maxOps} operator calls per branch.</li>
 * </ul>
 * The result type must be a static tensor type, or a tuple of them. Inner {@code if}s are converted first.
 *
 * <pre>
 * def @main(%c: bool, %x: Tensor[(5), float32]) { if (%c) { exp(%x) } else { negative(%x) } }
 *   ==>
 * def @main(%c: bool, %x: Tensor[(5), float32]) { where(%c, exp(%x), negative(%x)) }
 * </pre>
 *
 * Not done: branches with reductions or opaque operators (convolutions, matmuls: too costly to run
 * both), an {@code if} whose condition is not a scalar (Relay's {@code if} requires one anyway).
 * An {@code if} on a constant condition is fold-constant's; this pass would turn it into a select
 * that folding then decides.
 */
public final class IfConversion extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("if-conversion", 1,
            "turns an if with cheap, effect-free dataflow branches of static type into where (a select)");

    /** Integer division and remainder: trap on a zero divisor in C, so never run speculatively. */
    private static final Set<String> DIVISIONS = Set.of("divide", "floor_divide", "trunc_divide", "mod", "floor_mod", "trunc_mod", "fmod");

    /**
     * Injective operators that index by data: an index the untaken branch never meant to use (ONNX's
     * "if i < len then Gather(x, i)") is an error in the interpreter, so they must not run speculatively.
     */
    private static final Set<String> DATA_INDEXED = Set.of("gather", "gather_nd", "take");

    /** At most {@code maxOps} operator calls in each branch. */
    public record Options(int maxOps) {
        public static final Options DEFAULT = new Options(16);

        public Options {
            if (maxOps < 0) throw new IllegalArgumentException("if-conversion: maxOps must be >= 0, got " + maxOps);
        }
    }

    private final Options options;

    public IfConversion() {
        this(Options.DEFAULT);
    }

    public IfConversion(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        Map<Expr, Type> types = context.types().types();
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(post instanceof If branch) || !(types.get(pre) instanceof Type t) || !staticTensors(t)) return post;
                if (!(types.get(((If) pre).cond()) instanceof TensorType c) || c.rank() != 0) return post;
                if (!cheap(branch.thenBranch(), types) || !cheap(branch.elseBranch(), types)) return post;
                return select(branch.cond(), branch.thenBranch(), branch.elseBranch(), t);
            }
        }.rewrite(function.body()));
    }

    private static Expr select(Expr cond, Expr a, Expr b, Type t) {
        if (t instanceof TupleType tt) {
            List<Expr> fields = new ArrayList<>();
            for (int i = 0; i < tt.fields().size(); i++) {
                fields.add(select(cond, field(a, i), field(b, i), tt.fields().get(i)));
            }
            return new Tuple(fields);
        }
        return Call.op("where", cond, a, b);
    }

    private static Expr field(Expr tuple, int i) {
        return tuple instanceof Tuple t ? t.fields().get(i) : new TupleGetItem(tuple, i);
    }

    private static boolean staticTensors(Type t) {
        return switch (t) {
            case TensorType tt -> tt.isStatic();
            case TupleType tt -> tt.fields().stream().allMatch(IfConversion::staticTensors);
            default -> false;
        };
    }

    /**
     * Whether computing {@code branch} when it is not taken is harmless and cheap. Its nodes are the
     * rewritten ones (inner ifs already converted); a node built by this pass ({@code where}) has no
     * checked type, so the division check reads dtypes from the types of the original nodes where known.
     */
    private boolean cheap(Expr branch, Map<Expr, Type> types) {
        int ops = 0;
        for (Expr e : ExprTraversal.postOrder(branch)) {
            switch (e) {
                case Var v -> {}
                case Constant k -> {}
                case Tuple t -> {}
                case TupleGetItem g -> {}
                case Let l -> {}
                case Op op -> {}
                case Call call -> {
                    if (!(call.callee() instanceof Op op) || !allowed(op, call, types)) return false;
                    if (++ops > options.maxOps()) return false;
                }
                default -> {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean allowed(Op op, Call call, Map<Expr, Type> types) {
        var def = OpRegistry.find(op.name());
        if (def.isEmpty()) return false;
        OpPattern p = def.get().pattern();
        if (p != OpPattern.ELEMWISE && p != OpPattern.BROADCAST && p != OpPattern.INJECTIVE) return false;
        if (DATA_INDEXED.contains(op.name())) return false;
        if (DIVISIONS.contains(op.name())) {
            // a float division is total (inf/NaN); an integer one, or one of unknown dtype, is not
            Type t = types.get(call);
            return t instanceof TensorType tt && tt.dtype().isFloat();
        }
        return true;
    }
}
