package dev.relayfarm.passes;

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
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Merges structurally equal operator calls (and tuples and tuple projections): same operator, equal attributes,
 * and the same arguments after merging (the same node, or small constants with equal contents).
 * A later duplicate becomes a use of the earlier node, or of the let variable it is bound to.
 *
 * <pre>
 * add(exp(%x), exp(%x))                      ==>  %0 = exp(%x); add(%0, %0)
 * let %a = exp(%x); let %b = exp(%x); ...    ==>  let %a = exp(%x); let %b = %a; ...
 * </pre>
 *
 * Rules: only calls of operators are merged, never calls of functions (which may have effects) nor
 * {@code ref}/{@code ref_read}/{@code ref_write} (an operator call whose argument is an effect is
 * merged only when it is the very same argument node, i.e. the same value); operators in
 * {@link Options#skipOps} ({@code nn.dropout} by default: random in training) are never merged.
 * A duplicate is merged only within the same scope block (a function body, an {@code if} branch, a
 * {@code match} clause; a let body belongs to its let's block; see {@link Blocks}) and, for a let-bound earlier call, only
 * inside that let's body, so every use stays in scope and no computation moves into a branch or a
 * closure it was not in.
 *
 * <p>Not done: merging across branches or into enclosing blocks (hoisting), commutative operands
 * ({@code add(a, b)} vs {@code add(b, a)}), large constants by contents (only constants up to
 * {@link #SMALL_CONSTANT} elements compare by value), function literals, bodies of {@code Primitive}
 * (fused) functions.
 */
public final class EliminateCommonSubexpr extends FunctionPass {
    /** Constants with at most this many elements compare by contents; larger ones by identity. */
    static final int SMALL_CONSTANT = 64;

    /** @param skipOps operator names whose calls are never merged */
    public record Options(Set<String> skipOps) {
        public static final Options DEFAULT = new Options(Set.of("nn.dropout"));

        public Options {
            skipOps = Set.copyOf(skipOps);
        }
    }

    private static final PassInfo INFO = new PassInfo("eliminate-common-subexpr", 3,
            "merges equal operator calls over the same arguments");

    private final Options options;

    public EliminateCommonSubexpr() {
        this(Options.DEFAULT);
    }

    public EliminateCommonSubexpr(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        return function.withBody(new Merger(options, Blocks.of(function.body()), letVars(function)).rewrite(function.body()));
    }

    /** Let value node -> the variable it is bound to. */
    private static Map<Expr, Var> letVars(Function function) {
        Map<Expr, Var> out = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(function)) {
            if (e instanceof Let l) out.putIfAbsent(l.value(), l.var());
        }
        return out;
    }

    /** What makes two nodes "the same computation": kind, operator, attributes, arguments, block. */
    private record Key(Object head, Attrs attrs, List<Object> args, int block) {}

    /** A small constant by value: dtype, shape and contents. */
    private record ConstantKey(DType dtype, List<Integer> shape, int hash, NDArray data) {
        @Override
        public boolean equals(Object o) {
            return o instanceof ConstantKey k && k.dtype.equals(dtype) && k.shape.equals(shape) && k.hash == hash && k.data.contentEquals(data);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private static final class Merger extends ExprRewriter {
        private final Options options;
        private final Map<Expr, Integer> scope;
        private final Map<Expr, Var> letVars;
        /** Key -> the node (or let variable) that computes it, visible at the current point of the walk. */
        private final Map<Key, Expr> seen = new HashMap<>();
        /** Let variable -> the key it was registered under, to forget when its let's scope ends. */
        private final Map<Var, Key> letKeys = new IdentityHashMap<>();

        Merger(Options options, Map<Expr, Integer> scope, Map<Expr, Var> letVars) {
            this.options = options;
            this.scope = scope;
            this.letVars = letVars;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            if (post instanceof Let l) {
                // Post-order: the body is done, so the variable goes out of scope here.
                Key k = letKeys.remove(l.var());
                if (k != null) seen.remove(k, l.var());
                return post;
            }
            Key key = key(pre, post);
            if (key == null) return post;
            Expr earlier = seen.get(key);
            if (earlier != null) return earlier;
            Var bound = letVars.get(pre);
            if (bound != null) {
                // Reuse the variable, not the call: sharing the call node would evaluate it again.
                seen.put(key, bound);
                letKeys.put(bound, key);
            } else {
                seen.put(key, post);
            }
            return post;
        }

        private Key key(Expr pre, Expr post) {
            Integer block = scope.get(pre);
            // No block: inside a Primitive (fused) function, which is left as it is.
            if (block == null) return null;
            return switch (post) {
                case Call c when c.callee() instanceof Op op && !options.skipOps().contains(op.name()) ->
                        new Key(op, c.attrs(), argKeys(c.args()), block);
                case TupleGetItem t -> new Key(t.index(), Attrs.EMPTY, List.of(argKey(t.tuple())), block);
                case Tuple t -> new Key(Tuple.class, Attrs.EMPTY, argKeys(t.fields()), block);
                default -> null;
            };
        }

        private static List<Object> argKeys(List<Expr> args) {
            List<Object> out = new ArrayList<>(args.size());
            for (Expr a : args) out.add(argKey(a));
            return out;
        }

        /** A small constant by value, anything else by identity (Expr equality is identity). */
        private static Object argKey(Expr e) {
            if (e instanceof Constant c && c.data().size() <= SMALL_CONSTANT) {
                NDArray d = c.data();
                return new ConstantKey(d.dtype(), Arrays.stream(d.shape()).boxed().toList(), d.contentHash(), d);
            }
            return e;
        }
    }
}
