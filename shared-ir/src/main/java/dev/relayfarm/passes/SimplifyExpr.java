package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TupleGetItem;
import java.util.List;

/**
 * Local algebraic simplifications, each a {@link SimplifyPattern} (TVM's SimplifyExpr, MLIR-style
 * canonicalization patterns): reshape of a reshape/squeeze/expand_dims is one reshape; a reshape,
 * squeeze or expand_dims (or two in a row) to the operand's own static shape disappears; consecutive
 * transposes compose into one (none when the composition is the identity); {@code x * 1},
 * {@code 1 * x}, {@code x + 0}, {@code 0 + x}, {@code x - 0}, {@code x / 1} become {@code x} when the
 * types show broadcasting leaves x's shape and dtype alone; a cast to x's own dtype and {@code copy}
 * disappear; operands of {@code concatenate} that are empty along its axis are dropped, and a piece of a
 * {@code split} that is all of its operand (the other pieces empty) is the operand.
 *
 * <pre>
 * %0 = transpose(%x, axes=[1, 0]);  transpose(%0, axes=[1, 0])   ==>  %x
 * add(reshape(reshape(%x, newshape=[6]), newshape=[3, 2]), 0f)    ==>  reshape(%x, newshape=[3, 2])
 * multiply(%x: Tensor[(3), float32], ones(shape=[2, 3]))           ==>  unchanged (the result is (2, 3))
 * </pre>
 *
 * Patterns apply bottom-up, and again on their own result until none matches, so a chain collapses
 * in one run. Not done: {@code x * 0 -> 0} (wrong for NaN/Inf), patterns through let-bound
 * variables (the pass works on dataflow), reshapes whose shapes have unknown (Any) dims (their
 * result type cannot prove the shape unchanged), {@code reshape_like}, transpose/reshape reordering.
 */
public final class SimplifyExpr extends FunctionPass {
    /** Bound on patterns applied to one node in a row; each shrinks the node, so this is never hit in practice. */
    private static final int MAX_STEPS = 32;

    private static final PassInfo INFO = new PassInfo("simplify-expr", 3,
            "algebraic simplifications: reshape/transpose chains, x*1, x+0, same-type casts, copies");

    private final List<SimplifyPattern> patterns;

    public SimplifyExpr() {
        this(SimplifyPattern.ALL);
    }

    /** A pass running only {@code patterns} (tests; a pipeline may pick a subset). */
    SimplifyExpr(List<SimplifyPattern> patterns) {
        super(INFO);
        this.patterns = List.copyOf(patterns);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        ExprTypes types = new ExprTypes(context.types());
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                Expr cur = post;
                if (post instanceof TupleGetItem get) {
                    Expr whole = SimplifyPattern.wholeSplitPiece(get, types);
                    if (whole != null) cur = whole;
                }
                for (int step = 0; step < MAX_STEPS && cur instanceof Call c && c.callee() instanceof Op; step++) {
                    Expr next = firstMatch(c, types);
                    if (next == null) break;
                    types.stands(next, pre);
                    cur = next;
                }
                return cur;
            }
        }.rewrite(function.body()));
    }

    private Expr firstMatch(Call call, ExprTypes types) {
        for (SimplifyPattern p : patterns) {
            Expr r = p.apply(call, types);
            if (r != null) return r;
        }
        return null;
    }
}
