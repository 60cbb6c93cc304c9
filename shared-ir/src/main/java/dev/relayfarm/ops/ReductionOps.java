package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.ElementwiseKernels.UnaryFn;
import dev.relayfarm.ops.ReductionKernels.Fold;
import java.util.ArrayList;
import java.util.List;

/**
 * Reductions with Relay's names, attributes and relations:
 * <ul>
 *   <li>{@code sum mean max min prod all any} (ReduceAttrs, ReduceRel: input dtype kept;
 *       {@code all}/{@code any} take bool);
 *   <li>{@code argmax argmin} (ArgReduceAttrs; int32 indices into the reduced axes, row-major when
 *       several axes are reduced; rank ≥ 1);
 *   <li>{@code variance std} take two inputs as in Relay, {@code (data, mean)}, where {@code mean} is
 *       normally {@code mean(data, axis, keepdims=True)} (relay.variance builds that call for you);
 *       {@code std} is the square root of {@code variance} and needs floats.
 * </ul>
 * Axes: None or [] reduce every axis; negative axes count from the end; {@code exclude} reduces the
 * axes not listed. All are COMM_REDUCE for fusion.
 */
public final class ReductionOps {
    private ReductionOps() {}


    private static final List<OpDef<?>> DEFS = build();

    /** Every operator of this family, in registration order (also what the coverage test iterates). */
    public static List<OpDef<?>> defs() {
        return DEFS;
    }

    private static List<OpDef<?>> build() {
        List<OpDef<?>> ops = new ArrayList<>();
        ops.add(reduce("sum", Fold.SUM, false, DTypeRule.ANY));
        ops.add(reduce("mean", Fold.SUM, true, DTypeRule.ANY));
        ops.add(reduce("max", Fold.MAX, false, DTypeRule.ANY));
        ops.add(reduce("min", Fold.MIN, false, DTypeRule.ANY));
        ops.add(reduce("prod", Fold.PROD, false, DTypeRule.ANY));
        // On bool (0/1) "all" is the minimum and "any" the maximum.
        ops.add(reduce("all", Fold.MIN, false, null));
        ops.add(reduce("any", Fold.MAX, false, null));
        ops.add(argReduce("argmax", true));
        ops.add(argReduce("argmin", false));
        ops.add(variance("variance", false));
        ops.add(variance("std", true));
        return List.copyOf(ops);
    }

    /** {@code rule == null} means bool only. */
    private static OpDef<ReduceAttrs> reduce(String name, Fold fold, boolean mean, DTypeRule rule) {
        TypeRelationFn<ReduceAttrs> relation = (types, numInputs, attrs, reporter) -> {
            TensorType x = OpTypes.tensor(name, types.get(0), reporter);
            if (x == null) return false;
            checkDtype(name, rule, x.dtype());
            int[] axes = attrs.reducedAxes(name, x.rank());
            reporter.assign(types.get(numInputs), new TensorType(attrs.reducedShape(x.shape(), axes), x.dtype()));
            return true;
        };
        return new OpDef<>(name, 1, a -> ReduceAttrs.parse(name, a), relation, OpPattern.COMM_REDUCE, (in, attrs) -> {
            NDArray x = in.get(0);
            checkDtypeAtRun(name, rule, x.dtype());
            int[] axes = attrs.reducedAxes(name, x.rank());
            long divisor = mean ? ReductionKernels.count(x.shape(), axes) : 1;
            return List.of(ReductionKernels.fold(name, x, axes, attrs.keepdims(), fold, divisor));
        });
    }

    private static OpDef<ArgReduceAttrs> argReduce(String name, boolean isMax) {
        TypeRelationFn<ArgReduceAttrs> relation = (types, numInputs, attrs, reporter) -> {
            TensorType x = OpTypes.tensor(name, types.get(0), reporter);
            if (x == null) return false;
            if (x.rank() == 0) throw new RelationException(name + ": input must have rank >= 1, got a scalar");
            int[] axes = attrs.reducedAxes(name, x.rank());
            reporter.assign(types.get(numInputs), new TensorType(attrs.reducedShape(x.shape(), axes), DType.INT32));
            return true;
        };
        return new OpDef<>(name, 1, a -> ArgReduceAttrs.parse(name, a), relation, OpPattern.COMM_REDUCE, (in, attrs) -> {
            NDArray x = in.get(0);
            if (x.rank() == 0) throw new IllegalArgumentException(name + ": input must have rank >= 1, got a scalar");
            int[] axes = attrs.reducedAxes(name, x.rank());
            return List.of(ReductionKernels.argReduce(x, axes, attrs.keepdims(), isMax, attrs.selectLastIndex()));
        });
    }

    private static final UnaryFn SQRT = new UnaryFn(Math::sqrt, null, null);

    private static OpDef<VarianceAttrs> variance(String name, boolean std) {
        DTypeRule rule = std ? DTypeRule.FLOAT : DTypeRule.ANY;
        TypeRelationFn<VarianceAttrs> relation = (types, numInputs, attrs, reporter) -> {
            TensorType data = OpTypes.tensor(name, types.get(0), reporter);
            TensorType mean = OpTypes.tensor(name, types.get(1), reporter);
            if (data == null || mean == null) return false;
            checkDtype(name, rule, data.dtype());
            if (!data.dtype().equals(mean.dtype())) {
                throw new RelationException(name + ": dtypes " + data.dtype() + " and " + mean.dtype() + " do not match");
            }
            if (mean.rank() != data.rank()) {
                throw new RelationException(name + ": mean must have the rank of data (" + data.rank() + "), got shape "
                        + Broadcast.format(mean.shape()));
            }
            // The mean must broadcast against the data (Relay subtracts it element-wise).
            Broadcast.shape(name, data.shape(), mean.shape());
            int[] axes = attrs.reducedAxes(name, data.rank());
            reporter.assign(types.get(numInputs), new TensorType(attrs.reducedShape(data.shape(), axes), data.dtype()));
            return true;
        };
        return new OpDef<>(name, 2, a -> VarianceAttrs.parse(name, a), relation, OpPattern.COMM_REDUCE, (in, attrs) -> {
            NDArray data = in.get(0);
            checkDtypeAtRun(name, rule, data.dtype());
            int[] axes = attrs.reducedAxes(name, data.rank());
            NDArray v = ReductionKernels.variance(name, data, in.get(1), axes, attrs.keepdims(), attrs.unbiased());
            return List.of(std ? ElementwiseKernels.unary(name, v, SQRT) : v);
        });
    }

    private static void checkDtype(String name, DTypeRule rule, DType t) {
        if (rule == null && !t.isBool()) throw new RelationException(name + ": expects a bool tensor, got " + t);
        if (rule != null && !rule.accepts(t)) throw new RelationException(rule.complaint(name, t));
    }

    private static void checkDtypeAtRun(String name, DTypeRule rule, DType t) {
        try {
            checkDtype(name, rule, t);
        } catch (RelationException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
    }
}
