package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random well-typed, runnable Relay programs for pass property tests: a {@code @main} over static
 * float32 tensors whose body mixes dataflow DAGs (a value used several times is the same node),
 * let bindings, tuples and projections, {@code if} on a scalar comparison, local functions (some
 * lifted to a global {@code @helper}), small constants, refs, and operators of every fusion
 * pattern (elementwise, broadcast, injective, reductions, conv2d/bias_add/relu, batch_norm,
 * dropout, dense, pooling, softmax), including the shapes fold-scale-axis looks for.
 *
 * <p>Every value is built with the operator's own type relation run forward, so a generated
 * program type-checks by construction; {@link TypedProgramsTest} checks that it does and that the
 * interpreter runs it. Values stay finite and moderate: each value carries a bound on its
 * magnitude, and a value whose bound grows past {@link #BIG} is squashed with {@code tanh} before an
 * operator that could amplify it (exp, multiply, sums, conv). Moderate magnitudes also keep float
 * reassociation by passes within the property test's tolerance.
 */
public final class TypedPrograms {
    /** A tensor value in scope: its expression (a let variable or a dataflow node), type, magnitude bound. */
    private record Val(Expr expr, TensorType type, double bound) {
        int rank() {
            return type.rank();
        }

        int[] shape() {
            return type.staticShape();
        }
    }

    /**
     * A sequence of let bindings under construction with the values visible at its end. A nested
     * block (if branch, function body) starts from a copy of its parent's values, so what it binds
     * never escapes its scope.
     */
    private static final class Block {
        final List<Var> vars = new ArrayList<>();
        final List<Expr> values = new ArrayList<>();
        final List<Val> pool;

        Block(List<Val> visible) {
            pool = new ArrayList<>(visible);
        }

        Expr close(Expr result) {
            Expr body = result;
            for (int i = vars.size() - 1; i >= 0; i--) body = new Let(vars.get(i), values.get(i), body);
            return body;
        }
    }

    private static final double BIG = 8;
    private static final DType F32 = DType.FLOAT32;
    private static final List<String> UNARY = List.of(
            "exp", "tanh", "sigmoid", "nn.relu", "clip", "negative", "abs", "sqrt", "log", "nn.leaky_relu", "erf");
    private static final List<String> BINARY = List.of("add", "subtract", "multiply", "maximum", "minimum", "divide");

    private final Random r;
    private final Map<GlobalVar, Function> globals = new LinkedHashMap<>();
    private int names;

    private TypedPrograms(long seed) {
        this.r = new Random(seed);
    }

    /** The program for {@code seed} (deterministic), untyped as built; it type-checks. */
    public static IRModule generate(long seed) {
        return new TypedPrograms(seed).module();
    }

    private IRModule module() {
        List<Var> params = new ArrayList<>();
        List<Val> visible = new ArrayList<>();
        int nParams = 1 + r.nextInt(3);
        int[] first = paramShape();
        for (int i = 0; i < nParams; i++) {
            int[] shape = i > 0 && r.nextInt(3) > 0 ? first : paramShape();
            TensorType t = tensor(shape);
            Var p = Var.fresh(i == 0 ? "x" : "x" + i, t);
            params.add(p);
            visible.add(new Val(p, t, 2));
        }
        Block b = new Block(visible);
        int steps = 4 + r.nextInt(12);
        for (int i = 0; i < steps; i++) step(b, 2, true);
        // The last values are the ends of the longest chains; a tuple of a few of them keeps most of the body live.
        Expr result = b.pool.get(b.pool.size() - 1).expr;
        if (r.nextBoolean()) {
            List<Expr> fields = new ArrayList<>();
            for (int i = b.pool.size() - 1; i >= 0 && fields.size() < 2 + r.nextInt(2); i--) {
                if (!fields.contains(b.pool.get(i).expr)) fields.add(b.pool.get(i).expr);
            }
            result = new Tuple(fields);
        }
        Map<GlobalVar, Function> fs = new LinkedHashMap<>(globals);
        fs.put(new GlobalVar("main"), new Function(params, b.close(result)));
        return IRModule.of(fs, Map.of());
    }

    private int[] paramShape() {
        return switch (r.nextInt(10)) {
            // Now and then 8 channels: layout passes block channels by 8 or 16.
            case 0, 1, 2, 3, 4, 5 -> new int[] {1, r.nextInt(4) == 0 ? 8 : 1 + r.nextInt(3), 3 + r.nextInt(4), 3 + r.nextInt(4)};
            case 6, 7 -> new int[] {1 + r.nextInt(3), 2 + r.nextInt(5)};
            case 8 -> new int[] {1 + r.nextInt(2), 2 + r.nextInt(3), 2 + r.nextInt(4)};
            default -> new int[] {2 + r.nextInt(6)};
        };
    }

    // ---------------------------------------------------------------- steps

    /** Adds one value to {@code b}; {@code effects} allows refs (not inside functions or branches). */
    private void step(Block b, int depth, boolean effects) {
        int pick = r.nextInt(100);
        Val x = recent(b.pool);
        if (pick < 18) emit(b, unary(x));
        else if (pick < 32) emit(b, binary(b, x));
        else if (pick < 40) emit(b, broadcastConstant(x));
        else if (pick < 52) emit(b, injective(b, x));
        else if (pick < 58) emit(b, reduction(x));
        else if (pick < 72) emit(b, nn(b, x));
        else if (pick < 77) tuple(b, x);
        else if (pick < 84 && depth > 0) emit(b, branch(b, x, depth), true);
        else if (pick < 92 && depth > 0) function(b, x, depth);
        else if (pick < 96 && effects) ref(b, x);
        else emit(b, unary(x));
    }

    /** Adds {@code v} to the block: let-bound one time in three, else as a dataflow node others may share. */
    private void emit(Block b, Val v) {
        emit(b, v, r.nextInt(3) == 0);
    }

    private void emit(Block b, Val v, boolean bind) {
        if (!bind) {
            b.pool.add(v);
            return;
        }
        b.pool.add(new Val(bind(b, v.expr, r.nextInt(3) == 0 ? v.type : null), v.type, v.bound));
    }

    private Var bind(Block b, Expr value, Type annotation) {
        Var v = Var.fresh("v" + names++, annotation);
        b.vars.add(v);
        b.values.add(value);
        return v;
    }

    /** Mostly one of the last few values, so chains grow long; sometimes any value (wide DAGs). */
    private Val recent(List<Val> pool) {
        if (r.nextInt(10) < 7) return pool.get(pool.size() - 1 - r.nextInt(Math.min(3, pool.size())));
        return pick(pool);
    }

    // ---------------------------------------------------------------- elementwise and broadcast

    private Val unary(Val x) {
        String op = pick(UNARY);
        return switch (op) {
            case "exp" -> {
                Val a = small(x);
                yield call("exp", Attrs.EMPTY, Math.exp(a.bound), a);
            }
            case "tanh", "sigmoid", "erf" -> call(op, Attrs.EMPTY, 1, x);
            case "nn.relu", "negative", "abs" -> call(op, Attrs.EMPTY, x.bound, x);
            case "nn.leaky_relu" -> call(op, Attrs.of("alpha", AttrValue.of(0.1)), x.bound, x);
            case "clip" -> {
                double c = 0.5 + r.nextInt(4);
                yield call("clip", Attrs.of("a_min", AttrValue.of(-c)).with("a_max", AttrValue.of(c)), Math.min(c, x.bound), x);
            }
            // sqrt and log only ever see arguments that keep them finite.
            case "sqrt" -> {
                Val a = call("abs", Attrs.EMPTY, x.bound, x);
                yield call("sqrt", Attrs.EMPTY, Math.sqrt(x.bound), a);
            }
            default -> {
                Val a = call("add", Attrs.EMPTY, x.bound + 1, call("abs", Attrs.EMPTY, x.bound, x), scalar(1));
                yield call("log", Attrs.EMPTY, Math.log(x.bound + 1), a);
            }
        };
    }

    /** A binary op with a value of the same type (often {@code x} itself: sharing) or with a constant. */
    private Val binary(Block b, Val x) {
        List<Val> same = b.pool.stream().filter(v -> v.type.equals(x.type)).toList();
        Val y = r.nextInt(4) == 0 ? x : pick(same);
        String op = pick(BINARY);
        return switch (op) {
            case "add", "subtract" -> call(op, Attrs.EMPTY, x.bound + y.bound, x, y);
            case "maximum", "minimum" -> call(op, Attrs.EMPTY, Math.max(x.bound, y.bound), x, y);
            case "multiply" -> {
                Val a = small(x), c = small(y);
                yield call(op, Attrs.EMPTY, a.bound * c.bound, a, c);
            }
            // The denominator is at least 1.
            default -> {
                Val d = call("add", Attrs.EMPTY, y.bound + 1, call("abs", Attrs.EMPTY, y.bound, y), scalar(1));
                yield call("divide", Attrs.EMPTY, x.bound, x, d);
            }
        };
    }

    /** {@code x op c} with a constant bias of a broadcasting shape: scalar, last axis, or one axis (e.g. [C, 1, 1]). */
    private Val broadcastConstant(Val x) {
        int[] s = x.shape();
        int[] cs;
        int kind = r.nextInt(3);
        if (kind == 0 || s.length == 0) cs = new int[0];
        else if (kind == 1) cs = new int[] {s[s.length - 1]};
        else {
            int axis = r.nextInt(s.length);
            int lead = r.nextBoolean() ? axis : 0; // [C, 1, 1] or [1, C, 1, 1]
            cs = new int[s.length - lead];
            Arrays.fill(cs, 1);
            cs[axis - lead] = s[axis];
        }
        String op = pick(List.of("add", "multiply", "subtract", "maximum"));
        Val c = constant(cs, op.equals("multiply") ? 0.25 : -1, 1);
        Val a = op.equals("multiply") ? small(x) : x;
        return call(op, Attrs.EMPTY, a.bound + 1, r.nextBoolean() || op.equals("subtract") ? List.of(a, c) : List.of(c, a));
    }

    // ---------------------------------------------------------------- injective

    private Val injective(Block b, Val x) {
        int[] s = x.shape();
        int rank = s.length;
        switch (r.nextInt(6)) {
            case 0 -> {
                long n = Arrays.stream(s).asLongStream().reduce(1, (p, q) -> p * q);
                long[] newshape = switch (rank == 0 ? 0 : r.nextInt(3)) {
                    case 0 -> new long[] {-1};
                    case 1 -> new long[] {s[0], -1};
                    default -> {
                        long[] ns = new long[rank + 1];
                        for (int i = 0; i < rank; i++) ns[i] = s[i];
                        ns[rank] = 1;
                        yield ns;
                    }
                };
                if (n == 0) newshape = new long[] {-1};
                return call("reshape", Attrs.of("newshape", AttrValue.ints(newshape)), x.bound, x);
            }
            case 1 -> {
                if (rank < 2) break;
                List<Long> axes = new ArrayList<>();
                for (long i = 0; i < rank; i++) axes.add(i);
                java.util.Collections.shuffle(axes, r);
                return call("transpose", Attrs.of("axes", AttrValue.ints(axes.stream().mapToLong(Long::longValue).toArray())), x.bound, x);
            }
            case 2 -> {
                if (rank >= 4) break;
                return call("expand_dims", Attrs.of("axis", AttrValue.of((long) r.nextInt(rank + 1))), x.bound, x);
            }
            case 3 -> {
                for (int i = 0; i < rank; i++) {
                    if (s[i] == 1) return call("squeeze", Attrs.of("axis", AttrValue.ints(i)), x.bound, x);
                }
            }
            case 4 -> {
                if (rank == 0) break;
                int axis = r.nextInt(rank);
                List<Val> fits = b.pool.stream().filter(v -> concatenable(v, x, axis)).toList();
                Val y = r.nextInt(3) == 0 ? x : pick(fits);
                int[] cs = s.clone();
                cs[axis] = 1;
                List<Val> parts = r.nextBoolean() ? List.of(x, y) : List.of(y, constant(cs, -1, 1), x);
                Expr tuple = new Tuple(parts.stream().map(Val::expr).toList());
                TupleType tt = new TupleType(parts.stream().map(v -> (Type) v.type).toList());
                double bound = parts.stream().mapToDouble(Val::bound).max().orElseThrow();
                Attrs a = Attrs.of("axis", AttrValue.of((long) axis));
                return new Val(new Call(Op.get("concatenate"), List.of(tuple), a), infer("concatenate", a, List.of(tt)), bound);
            }
            default -> {
                if (rank == 0) break;
                long[] begin = new long[rank], end = new long[rank], strides = new long[rank];
                for (int i = 0; i < rank; i++) {
                    begin[i] = s[i] > 1 ? r.nextInt(s[i] / 2 + 1) : 0;
                    end[i] = begin[i] + 1 + r.nextInt((int) (s[i] - begin[i]));
                    strides[i] = r.nextInt(4) == 0 ? 2 : 1;
                }
                Attrs a = Attrs.of("begin", AttrValue.ints(begin)).with("end", AttrValue.ints(end)).with("strides", AttrValue.ints(strides));
                return call("strided_slice", a, x.bound, x);
            }
        }
        return unary(x);
    }

    private static boolean concatenable(Val v, Val x, int axis) {
        if (v.rank() != x.rank()) return false;
        for (int i = 0; i < x.rank(); i++) {
            if (i != axis && v.shape()[i] != x.shape()[i]) return false;
        }
        return true;
    }

    // ---------------------------------------------------------------- reductions

    private Val reduction(Val x) {
        int rank = x.rank();
        String op = pick(List.of("sum", "mean", "max", "sum"));
        Attrs a = Attrs.of("keepdims", AttrValue.of(r.nextBoolean()));
        long count = Arrays.stream(x.shape()).asLongStream().reduce(1, (p, q) -> p * q);
        if (rank > 0 && r.nextInt(4) > 0) {
            int first = r.nextInt(rank);
            long[] axes = rank > 1 && r.nextBoolean() ? new long[] {first, (first + 1 + r.nextInt(rank - 1)) % rank} : new long[] {first};
            if (r.nextBoolean()) axes[0] -= rank; // negative axes count from the end
            a = a.with("axis", AttrValue.ints(axes));
            count = 1;
            for (long ax : axes) count *= x.shape()[(int) ((ax + rank) % rank)];
        }
        Val in = op.equals("sum") ? small(x) : x;
        return call(op, a, op.equals("sum") ? in.bound * count : in.bound, in);
    }

    // ---------------------------------------------------------------- nn

    private Val nn(Block b, Val x) {
        if (x.rank() == 4) {
            return switch (r.nextInt(8)) {
                case 0, 1, 2 -> convBlock(x);
                case 3 -> batchNorm(x);
                case 4 -> pool(x);
                case 5 -> dropout(x);
                case 6 -> parallelConvs(x);
                default -> call("nn.softmax", Attrs.of("axis", AttrValue.of((long) (1 - r.nextInt(2) * 2))), 1, x);
            };
        }
        if (x.rank() == 2 || x.rank() == 3 && r.nextBoolean()) return dense(x);
        if (x.rank() >= 1 && r.nextBoolean()) return call("nn.softmax", Attrs.of("axis", AttrValue.of(-1L)), 1, x);
        return dropout(x);
    }

    /**
     * conv2d with a constant weight, then (sometimes) a per-channel scale — the shape fold-scale-axis
     * folds — bias_add and relu. Sometimes the input is first scaled per input channel (the forward
     * folding pattern), by a positive constant.
     */
    private Val convBlock(Val x) {
        int[] s = x.shape();
        int c = s[1], h = s[2], w = s[3];
        Val in = small(x);
        if (r.nextInt(3) == 0) in = call("multiply", Attrs.EMPTY, in.bound * 2, in, positive(new int[] {c, 1, 1}));
        if (r.nextInt(4) == 0) in = call("add", Attrs.EMPTY, in.bound + 1, in, constant(new int[] {c, 1, 1}, -1, 1));
        if (r.nextInt(4) == 0) in = call("nn.relu", Attrs.EMPTY, in.bound, in);
        int o = c % 8 == 0 && r.nextBoolean() ? 8 * (1 + r.nextInt(2)) : 1 + r.nextInt(4);
        int k = h >= 3 && w >= 3 && r.nextBoolean() ? 3 : 1;
        int pad = k == 3 && r.nextBoolean() ? 1 : 0;
        int stride = r.nextInt(4) == 0 ? 2 : 1;
        Val weight = constant(new int[] {o, c, k, k}, -1 / Math.sqrt(c * k * k), 1 / Math.sqrt(c * k * k));
        Attrs a = Attrs.of("padding", AttrValue.ints(pad, pad)).with("strides", AttrValue.ints(stride, stride));
        if (r.nextBoolean()) a = a.with("channels", AttrValue.of((long) o)).with("kernel_size", AttrValue.ints(k, k));
        Val y = call("nn.conv2d", a, in.bound * Math.sqrt(c * k * k), in, weight);
        if (r.nextInt(4) == 0) {
            // A second conv of the same shape summed in (a residual-style join), on the same input or on x.
            Val in2 = r.nextBoolean() ? in : small(x);
            Val w2 = constant(new int[] {o, c, k, k}, -1 / Math.sqrt(c * k * k), 1 / Math.sqrt(c * k * k));
            Val y2 = call("nn.conv2d", a, in2.bound * Math.sqrt(c * k * k), in2, w2);
            y = call("add", Attrs.EMPTY, y.bound + y2.bound, y, y2);
        }
        if (r.nextInt(3) == 0) y = call("multiply", Attrs.EMPTY, y.bound * 2, y, constant(new int[] {o, 1, 1}, -2, 2));
        if (r.nextBoolean()) y = call("nn.bias_add", Attrs.EMPTY, y.bound + 1, y, constant(new int[] {o}, -1, 1));
        else if (r.nextInt(3) == 0) y = call("add", Attrs.EMPTY, y.bound + 1, y, constant(new int[] {o, 1, 1}, -1, 1));
        if (r.nextBoolean()) y = call("nn.relu", Attrs.EMPTY, y.bound, y);
        return y;
    }

    /**
     * Three or four convolutions of one input with the same attributes and kernel size (output
     * channels may differ), each maybe with bias and relu, joined by concatenate along C: the
     * inception shape combine-parallel-conv2d merges.
     */
    private Val parallelConvs(Val x) {
        int c = x.shape()[1];
        Val in = small(x);
        int k = x.shape()[2] >= 3 && x.shape()[3] >= 3 && r.nextBoolean() ? 3 : 1;
        Attrs a = Attrs.of("padding", AttrValue.ints(k / 2, k / 2));
        List<Val> branches = new ArrayList<>();
        for (int i = 3 + r.nextInt(2); i > 0; i--) {
            int o = 1 + r.nextInt(3);
            Val w = constant(new int[] {o, c, k, k}, -1 / Math.sqrt(c * k * k), 1 / Math.sqrt(c * k * k));
            Val y = call("nn.conv2d", a, in.bound * Math.sqrt(c * k * k), in, w);
            if (r.nextBoolean()) y = call("nn.bias_add", Attrs.EMPTY, y.bound + 1, y, constant(new int[] {o}, -1, 1));
            if (r.nextBoolean()) y = call("nn.relu", Attrs.EMPTY, y.bound, y);
            branches.add(y);
        }
        Expr tuple = new Tuple(branches.stream().map(Val::expr).toList());
        TupleType tt = new TupleType(branches.stream().map(v -> (Type) v.type).toList());
        Attrs cat = Attrs.of("axis", AttrValue.of(1L));
        double bound = branches.stream().mapToDouble(Val::bound).max().orElseThrow();
        return new Val(new Call(Op.get("concatenate"), List.of(tuple), cat), infer("concatenate", cat, List.of(tt)), bound);
    }

    private Val batchNorm(Val x) {
        int c = x.shape()[1];
        Val bn = call("nn.batch_norm", Attrs.of("epsilon", AttrValue.of(1e-5)), 0, x, constant(new int[] {c}, 0.5, 1.5),
                constant(new int[] {c}, -1, 1), constant(new int[] {c}, -0.5, 0.5), positive(new int[] {c}));
        // var >= 0.5 and |gamma| <= 1.5: the output is at most 1.5 * (|x| + 0.5) / sqrt(0.5) + 1.
        return new Val(new TupleGetItem(bn.expr, 0), x.type, 2.2 * (x.bound + 0.5) + 1);
    }

    private Val pool(Val x) {
        int[] s = x.shape();
        int h = s[2], w = s[3];
        switch (r.nextInt(3)) {
            case 0 -> {
                return call("nn.global_avg_pool2d", Attrs.EMPTY, x.bound, x);
            }
            default -> {
                int k = Math.min(2 + r.nextInt(2), Math.min(h, w));
                int stride = 1 + r.nextInt(2);
                Attrs a = Attrs.of("pool_size", AttrValue.ints(k, k)).with("strides", AttrValue.ints(stride, stride));
                if (k > 1 && r.nextBoolean()) a = a.with("padding", AttrValue.ints(1, 1));
                return call(r.nextBoolean() ? "nn.max_pool2d" : "nn.avg_pool2d", a, x.bound, x);
            }
        }
    }

    private Val dropout(Val x) {
        Val d = call("nn.dropout", Attrs.of("rate", AttrValue.of(0.25)), 0, x);
        return new Val(new TupleGetItem(d.expr, 0), x.type, x.bound);
    }

    private Val dense(Val x) {
        Val in = small(x);
        if (x.rank() != 2) in = call("nn.batch_flatten", Attrs.EMPTY, in.bound, in);
        int k = in.shape()[1];
        int units = 1 + r.nextInt(6);
        Attrs a = r.nextBoolean() ? Attrs.of("units", AttrValue.of((long) units)) : Attrs.EMPTY;
        Val y = call("nn.dense", a, in.bound * Math.sqrt(k), in, constant(new int[] {units, k}, -1 / Math.sqrt(k), 1 / Math.sqrt(k)));
        if (r.nextInt(3) == 0) y = call("multiply", Attrs.EMPTY, y.bound * 2, y, constant(new int[] {units}, -2, 2));
        if (r.nextBoolean()) y = call("nn.bias_add", Attrs.of("axis", AttrValue.of(-1L)), y.bound + 1, y, constant(new int[] {units}, -1, 1));
        return y;
    }

    // ---------------------------------------------------------------- structure

    /** A tuple of two or three values, let-bound or not, and one or two projections of it. */
    private void tuple(Block b, Val x) {
        List<Val> fields = new ArrayList<>(List.of(x, pick(b.pool)));
        if (r.nextBoolean()) fields.add(pick(b.pool));
        Expr t = new Tuple(fields.stream().map(Val::expr).toList());
        if (r.nextBoolean()) t = bind(b, t, null);
        int n = 1 + r.nextInt(2);
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(fields.size());
            emit(b, new Val(new TupleGetItem(t, k), fields.get(k).type, fields.get(k).bound));
        }
    }

    /** {@code if (mean(v) < c) {then} else {else}}, each branch a small block ending in a value of {@code x}'s type. */
    private Val branch(Block b, Val x, int depth) {
        Val v = pick(b.pool);
        Val m = call(r.nextBoolean() ? "mean" : "max", Attrs.EMPTY, v.bound, v);
        Val cond = call(pick(List.of("less", "greater", "greater_equal")), Attrs.EMPTY, 1, m, scalar(r.nextDouble() - 0.5));
        Val t = sameType(b, x, depth - 1), e = sameType(b, x, depth - 1);
        return new Val(new If(cond.expr, t.expr, e.expr), x.type, Math.max(t.bound, e.bound));
    }

    /** A nested block starting from {@code x} whose result has {@code x}'s type. */
    private Val sameType(Block outer, Val x, int depth) {
        Block b = new Block(outer.pool);
        b.pool.add(x);
        int steps = r.nextInt(3);
        Val cur = x;
        for (int i = 0; i < steps; i++) {
            Val next = switch (r.nextInt(4)) {
                case 0 -> binary(b, cur);
                case 1 -> broadcastConstant(cur);
                default -> unary(cur);
            };
            // A branch may also do unrelated work of its own (its lets stay inside it).
            if (depth > 0 && r.nextInt(4) == 0) step(b, depth, false);
            emit(b, next);
            cur = b.pool.get(b.pool.size() - 1);
            if (!cur.type.equals(x.type)) throw new IllegalStateException("shape-preserving step changed " + x.type + " to " + cur.type);
        }
        return new Val(b.close(cur.expr), x.type, cur.bound);
    }

    /**
     * A function of one tensor: a let-bound closure (it may capture values in scope) or, one time in
     * three, a global {@code @helper} that captures nothing; then called once or twice.
     */
    private void function(Block b, Val x, int depth) {
        boolean global = r.nextInt(3) == 0;
        Var p = Var.fresh("p" + names++, x.type);
        Block body = new Block(global ? List.of() : b.pool);
        body.pool.add(new Val(p, x.type, x.bound));
        int steps = 1 + r.nextInt(3);
        for (int i = 0; i < steps; i++) step(body, depth - 1, false);
        Val res = body.pool.get(body.pool.size() - 1);
        Function fn = new Function(List.of(p), body.close(res.expr), r.nextBoolean() ? res.type : null);
        Expr callee;
        if (global) {
            GlobalVar g = new GlobalVar("helper" + globals.size());
            globals.put(g, fn);
            callee = g;
        } else {
            callee = bind(b, fn, null);
        }
        emit(b, new Val(new Call(callee, List.of(x.expr)), res.type, res.bound));
        // A second call on another value of the same type, no larger (the body's bound assumed x's).
        List<Val> again = b.pool.stream().filter(v -> v.type.equals(x.type) && v.bound <= x.bound).toList();
        if (!again.isEmpty() && r.nextBoolean()) emit(b, new Val(new Call(callee, List.of(pick(again).expr)), res.type, res.bound));
    }

    /** {@code let %r = ref(x); [let %_ = %r := f(%r^);] let %v = %r^}, all let-bound so the effects stay ordered. */
    private void ref(Block b, Val x) {
        Var ref = bind(b, new RefCreate(x.expr), null);
        Val read = new Val(new RefRead(ref), x.type, x.bound);
        if (r.nextBoolean()) {
            Val updated = r.nextBoolean() ? call("tanh", Attrs.EMPTY, 1, read) : call("nn.relu", Attrs.EMPTY, x.bound, read);
            bind(b, new RefWrite(ref, updated.expr), null);
            read = new Val(new RefRead(ref), x.type, updated.bound);
        }
        b.pool.add(new Val(bind(b, read.expr, null), x.type, read.bound));
    }

    // ---------------------------------------------------------------- leaves and helpers

    /** {@code x}, or {@code tanh(x)} when {@code x} may be too large to amplify further. */
    private Val small(Val x) {
        return x.bound > BIG ? call("tanh", Attrs.EMPTY, 1, x) : x;
    }

    private Val constant(int[] shape, double lo, double hi) {
        NDArray a = NDArray.zeros(F32, shape);
        for (int i = 0; i < a.size(); i++) a.setDouble(i, Math.round((lo + r.nextDouble() * (hi - lo)) * 1000) / 1000.0);
        return new Val(new Constant(a), tensor(shape), Math.max(Math.abs(lo), Math.abs(hi)));
    }

    private Val positive(int[] shape) {
        return constant(shape, 0.5, 2);
    }

    private static Val scalar(double v) {
        return new Val(new Constant(NDArray.scalar((float) v)), TensorType.scalar(F32), Math.abs(v));
    }

    private static Val call(String op, Attrs attrs, double bound, Val... args) {
        return call(op, attrs, bound, List.of(args));
    }

    private static Val call(String op, Attrs attrs, double bound, List<Val> args) {
        TensorType t = infer(op, attrs, args.stream().map(v -> (Type) v.type).toList());
        return new Val(new Call(Op.get(op), args.stream().map(Val::expr).toList(), attrs), t, bound);
    }

    /**
     * The operator's relation run forward. Tuple results (batch_norm, dropout) are typed by their
     * first field, which is all the generator projects.
     */
    private static TensorType infer(String op, Attrs attrs, List<Type> inputs) {
        Type t = OpRegistry.get(op).inferOutput(inputs, attrs)
                .orElseThrow(() -> new IllegalStateException(op + " did not type forward on " + inputs));
        if (t instanceof TupleType tt) t = tt.fields().get(0);
        return (TensorType) t;
    }

    private static TensorType tensor(int[] shape) {
        return new TensorType(Arrays.stream(shape).mapToObj(d -> (Dim) new Dim.Int(d)).toList(), F32);
    }

    private <T> T pick(List<T> list) {
        return list.get(r.nextInt(list.size()));
    }
}
