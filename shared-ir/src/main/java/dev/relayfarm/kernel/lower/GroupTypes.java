package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;

/**
 * A fused group typed on its own: its inputs then its results as tensor types in kernel parameter order (tuples
 * flattened), how many are inputs, and the inference they came from (the typed function {@code fn}). What the kernels
 * over dynamic shapes ({@link RowKernels}, {@link WidthKernels}) read before lowering a group.
 */
record GroupTypes(InferResult types, Function fn, List<TensorType> flat, int inputs) {
    static GroupTypes of(Function primitive) {
        InferResult types = TypeInference.inferExpr(primitive, OpResolver.REGISTRY);
        Function fn = types.module().main().orElseThrow();
        List<TensorType> flat = new ArrayList<>();
        for (Var p : fn.params()) flatten(types.typeOf(p), flat);
        int inputs = flat.size();
        flatten(types.typeOf(fn.body()), flat);
        return new GroupTypes(types, fn, flat, inputs);
    }

    /** The results' types, tuples flattened. */
    List<TensorType> results() {
        return flat.subList(inputs, flat.size());
    }

    static void flatten(Type t, List<TensorType> out) {
        switch (t) {
            case TensorType tt -> out.add(tt);
            case TupleType tt -> tt.fields().forEach(f -> flatten(f, out));
            default -> throw new UnsupportedOperationException("a kernel over dynamic shapes takes and gives tensors and tuples of tensors, not " + t);
        }
    }
}
