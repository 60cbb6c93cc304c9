package dev.relayfarm.ops;

import static dev.relayfarm.ops.KernelCase.arr;
import static dev.relayfarm.ops.KernelCase.f32;
import static dev.relayfarm.ops.KernelCase.i32;
import static dev.relayfarm.ops.KernelCase.i64;
import static dev.relayfarm.ops.KernelCase.iota;
import static dev.relayfarm.ops.KernelCase.of;
import static dev.relayfarm.ops.KernelCase.shape;
import static dev.relayfarm.ops.KernelCase.tuple;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.ops.transform.TransformOps;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reference kernels of the transform operators against hand-computed values. Every case also runs
 * the relation on the inputs' static types and checks it predicts the kernel's output shapes and
 * dtypes (the relation is the operator's shape function).
 */
class TransformKernelTest {

    static Stream<KernelCase> cases() {
        NDArray x23 = f32(shape(2, 3), 1, 2, 3, 4, 5, 6);
        NDArray x234 = iota(DType.FLOAT32, 2, 3, 4);
        List<KernelCase> c = new ArrayList<>();

        // reshape: same elements in the same row-major order.
        c.add(of("reshape", "newshape=[3, -1]", List.of(x23), f32(shape(3, 2), 1, 2, 3, 4, 5, 6)));
        c.add(of("reshape", "newshape=[-4, 1, 2, -3]", List.of(x234), iota(DType.FLOAT32, 1, 2, 12)));
        c.add(of("reshape", "newshape=[]", List.of(f32(shape(1, 1), 7)), f32(shape(), 7)));

        // transpose
        c.add(of("transpose", "", List.of(x23), f32(shape(3, 2), 1, 4, 2, 5, 3, 6)));
        c.add(of("transpose", "axes=[1, 2, 0]", List.of(x234), f32(shape(3, 4, 2),
                0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23)));
        c.add(of("transpose", "axes=[0, 1]", List.of(i64(shape(2, 2), 1, 2, 3, 4)), i64(shape(2, 2), 1, 2, 3, 4)));
        c.add(of("transpose", "", List.of(arr(DType.FLOAT16, shape(2, 2), 1, 2, 3, 4)), arr(DType.FLOAT16, shape(2, 2), 1, 3, 2, 4)));

        // concatenate
        c.add(tuple("concatenate", "axis=1", List.of(x23, f32(shape(2, 1), 9, 10)),
                f32(shape(2, 4), 1, 2, 3, 9, 4, 5, 6, 10)));
        c.add(tuple("concatenate", "axis=0", List.of(x23, f32(shape(1, 3), 7, 8, 9)),
                f32(shape(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9)));
        c.add(tuple("concatenate", "axis=-1", List.of(i32(shape(2), 1, 2), i32(shape(0)), i32(shape(1), 3)), i32(shape(3), 1, 2, 3)));

        // squeeze / expand_dims
        c.add(of("squeeze", "", List.of(f32(shape(1, 3, 1), 1, 2, 3)), f32(shape(3), 1, 2, 3)));
        c.add(of("squeeze", "axis=[-1]", List.of(f32(shape(1, 3, 1), 1, 2, 3)), f32(shape(1, 3), 1, 2, 3)));
        c.add(of("expand_dims", "axis=1, num_newaxis=2", List.of(i32(shape(2), 5, 6)), i32(shape(2, 1, 1), 5, 6)));

        // strided_slice: numpy x[1:, ::-2] on a 2x3, a negative-stride full reversal, and size mode.
        c.add(of("strided_slice", "begin=[1, -1], end=[2, -4], strides=[1, -2]", List.of(x23), f32(shape(1, 2), 6, 4)));
        c.add(of("strided_slice", "begin=[-1], end=[-100], strides=[-1]", List.of(x23), f32(shape(2, 3), 4, 5, 6, 1, 2, 3)));
        c.add(of("strided_slice", "begin=[1, 1], end=[1, -1], slice_mode=\"size\"", List.of(x234),
                f32(shape(1, 2, 4), 16, 17, 18, 19, 20, 21, 22, 23)));
        c.add(of("strided_slice", "begin=[1], end=[3], strides=[1], axes=[2]", List.of(x234), f32(shape(2, 3, 2),
                1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22)));
        c.add(of("strided_slice", "begin=[5], end=[9]", List.of(x23), f32(shape(0, 3))));

        // take: modes, axis None, batch_dims.
        c.add(of("take", "axis=1", List.of(x23, i32(shape(2), 2, 0)), f32(shape(2, 2), 3, 1, 6, 4)));
        c.add(of("take", "", List.of(x23, i64(shape(2, 2), 5, 0, 1, 1)), f32(shape(2, 2), 6, 1, 2, 2)));
        c.add(of("take", "axis=0, mode=\"clip\"", List.of(i32(shape(3), 10, 20, 30), i32(shape(3), -1, 7, 1)), i32(shape(3), 10, 30, 20)));
        c.add(of("take", "axis=0, mode=\"wrap\"", List.of(i32(shape(3), 10, 20, 30), i32(shape(3), -1, 7, 1)), i32(shape(3), 30, 20, 20)));
        c.add(of("take", "axis=0, mode=\"fast\"", List.of(i32(shape(3), 10, 20, 30), i32(shape(), 2)), i32(shape(), 30)));
        c.add(of("take", "axis=1, batch_dims=1", List.of(x23, i32(shape(2, 2), 2, 2, 0, 1)), f32(shape(2, 2), 3, 3, 4, 5)));

        // creation
        c.add(of("zeros", "shape=[2], dtype=\"int64\"", List.of(), i64(shape(2), 0, 0)));
        c.add(of("ones", "shape=[1, 2]", List.of(), f32(shape(1, 2), 1, 1)));
        c.add(of("full", "shape=[3], dtype=\"int32\"", List.of(NDArray.scalar(2.9f)), i32(shape(3), 2, 2, 2)));
        c.add(of("full", "shape=[2]", List.of(NDArray.scalar(-1.5)), arr(DType.FLOAT64, shape(2), -1.5, -1.5)));
        c.add(of("zeros_like", "", List.of(i32(shape(2), 4, 5)), i32(shape(2), 0, 0)));
        c.add(of("ones_like", "", List.of(arr(DType.UINT8, shape(3), 4, 5, 6)), arr(DType.UINT8, shape(3), 1, 1, 1)));
        c.add(of("full_like", "", List.of(x23, NDArray.scalar(7)), f32(shape(2, 3), 7, 7, 7, 7, 7, 7)));
        c.add(of("full_like", "", List.of(i64(shape(1), 0), NDArray.scalar(Long.MAX_VALUE)),
                NDArray.fromLongs(DType.INT64, shape(1), new long[] {Long.MAX_VALUE})));

        // split
        c.add(of("split", "indices_or_sections=3, axis=1", List.of(x23), f32(shape(2, 1), 1, 4), f32(shape(2, 1), 2, 5), f32(shape(2, 1), 3, 6)));
        c.add(of("split", "indices_or_sections=[1]", List.of(x23), f32(shape(1, 3), 1, 2, 3), f32(shape(1, 3), 4, 5, 6)));
        c.add(of("split", "indices_or_sections=[1, 1], axis=-1", List.of(x23),
                f32(shape(2, 1), 1, 4), f32(shape(2, 0)), f32(shape(2, 2), 2, 3, 5, 6)));

        // gather (take_along_axis)
        c.add(of("gather", "axis=1", List.of(x23, i32(shape(2, 2), 2, 0, 1, -1)), f32(shape(2, 2), 3, 1, 5, 6)));
        c.add(of("gather", "axis=0", List.of(x23, i64(shape(1, 3), 1, 0, 1)), f32(shape(1, 3), 4, 2, 6)));

        // broadcast_to / tile / stack / reverse
        c.add(of("broadcast_to", "shape=[2, 3, 2]", List.of(i32(shape(3, 1), 1, 2, 3)), i32(shape(2, 3, 2), 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3)));
        c.add(of("broadcast_to", "shape=[2]", List.of(NDArray.scalar(5f)), f32(shape(2), 5, 5)));
        c.add(of("tile", "reps=[2, 2]", List.of(f32(shape(2), 1, 2)), f32(shape(2, 4), 1, 2, 1, 2, 1, 2, 1, 2)));
        c.add(of("tile", "reps=[2]", List.of(x23), f32(shape(2, 6), 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6)));
        c.add(of("tile", "reps=[1, 3, 1]", List.of(i32(shape(2, 1), 1, 2)), i32(shape(1, 6, 1), 1, 2, 1, 2, 1, 2)));
        c.add(tuple("stack", "axis=0", List.of(f32(shape(2), 1, 2), f32(shape(2), 3, 4)), f32(shape(2, 2), 1, 2, 3, 4)));
        c.add(tuple("stack", "axis=-1", List.of(f32(shape(2), 1, 2), f32(shape(2), 3, 4), f32(shape(2), 5, 6)),
                f32(shape(2, 3), 1, 3, 5, 2, 4, 6)));
        c.add(of("reverse", "axis=0", List.of(x23), f32(shape(2, 3), 4, 5, 6, 1, 2, 3)));
        c.add(of("reverse", "axis=-1", List.of(x23), f32(shape(2, 3), 3, 2, 1, 6, 5, 4)));

        // layout_transform: blocking, unblocking, reordering, re-blocking.
        c.add(of("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NCHW2c\"", List.of(iota(DType.FLOAT32, 1, 4, 1, 2)),
                f32(shape(1, 2, 1, 2, 2), 0, 2, 1, 3, 4, 6, 5, 7)));
        c.add(of("layout_transform", "src_layout=\"NCHW2c\", dst_layout=\"NCHW\"", List.of(f32(shape(1, 2, 1, 2, 2), 0, 2, 1, 3, 4, 6, 5, 7)),
                iota(DType.FLOAT32, 1, 4, 1, 2)));
        c.add(of("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NHWC\"", List.of(iota(DType.INT8, 1, 2, 2, 2)),
                arr(DType.INT8, shape(1, 2, 2, 2), 0, 4, 1, 5, 2, 6, 3, 7)));
        c.add(of("layout_transform", "src_layout=\"NHWC\", dst_layout=\"NCHW\"", List.of(arr(DType.INT8, shape(1, 2, 2, 2), 0, 4, 1, 5, 2, 6, 3, 7)),
                iota(DType.INT8, 1, 2, 2, 2)));
        c.add(of("layout_transform", "src_layout=\"NCHW4c\", dst_layout=\"NCHW2c\"", List.of(iota(DType.FLOAT32, 1, 1, 1, 2, 4)),
                f32(shape(1, 2, 1, 2, 2), 0, 1, 4, 5, 2, 3, 6, 7)));

        // arange: float, negative integer step, empty.
        c.add(of("arange", "", List.of(NDArray.scalar(0f), NDArray.scalar(1f), NDArray.scalar(0.25f)), f32(shape(4), 0, 0.25, 0.5, 0.75)));
        c.add(of("arange", "dtype=\"int32\"", List.of(NDArray.scalar(5), NDArray.scalar(0), NDArray.scalar(-2)), i32(shape(3), 5, 3, 1)));
        c.add(of("arange", "dtype=\"int64\"", List.of(NDArray.scalar(0L), NDArray.scalar(10L), NDArray.scalar(3L)), i64(shape(4), 0, 3, 6, 9)));
        c.add(of("arange", "dtype=\"int64\"", List.of(NDArray.scalar(3L), NDArray.scalar(3L), NDArray.scalar(1L)), i64(shape(0))));

        // shape_of
        c.add(of("shape_of", "", List.of(x23), i32(shape(2), 2, 3)));
        c.add(of("shape_of", "dtype=\"int64\"", List.of(NDArray.scalar(1f)), i64(shape(0))));

        // one_hot
        c.add(of("one_hot", "depth=3", List.of(i32(shape(3), 0, 2, -1), NDArray.scalar(1f), NDArray.scalar(0f)),
                f32(shape(3, 3), 1, 0, 0, 0, 0, 1, 0, 0, 0)));
        c.add(of("one_hot", "depth=3, axis=0, dtype=\"int32\"", List.of(i64(shape(3), 0, 2, 7), NDArray.scalar(5.0), NDArray.scalar(-1.0)),
                i32(shape(3, 3), 5, -1, -1, -1, -1, -1, -1, 5, -1)));

        // copy / reshape_like / gather_nd
        c.add(of("copy", "", List.of(i32(shape(2), 1, 2)), i32(shape(2), 1, 2)));
        c.add(of("reshape_like", "", List.of(x23, NDArray.zeros(DType.INT8, 3, 2)), f32(shape(3, 2), 1, 2, 3, 4, 5, 6)));
        c.add(of("reshape_like", "lhs_begin=1, rhs_end=2", List.of(x23, NDArray.zeros(DType.INT8, 3, 1, 9)), f32(shape(2, 3, 1), 1, 2, 3, 4, 5, 6)));
        c.add(of("gather_nd", "", List.of(x23, i32(shape(2, 2), 1, 0, 2, -3)), f32(shape(2), 6, 1)));
        c.add(of("gather_nd", "", List.of(x23, i64(shape(1, 2), 1, 0)), f32(shape(2, 3), 4, 5, 6, 1, 2, 3)));
        // batch_dims=1: indices (M=1, batch 2, 1) pick row 1 of batch 0 and row 0 of batch 1
        c.add(of("gather_nd", "batch_dims=1", List.of(iota(DType.FLOAT32, 2, 2, 2), i64(shape(1, 2, 1), 1, 0)),
                f32(shape(2, 1, 2), 2, 3, 4, 5)));

        // scatter_elements: updates land at data[.., indices, ..] along the axis; duplicates: last wins or fold
        NDArray idx22 = i64(shape(2, 2), 2, -3, 0, 0);
        NDArray upd22 = f32(shape(2, 2), 10, 20, 30, 40);
        c.add(of("scatter_elements", "axis=1", List.of(x23, idx22, upd22), f32(shape(2, 3), 20, 2, 10, 40, 5, 6)));
        c.add(of("scatter_elements", "axis=1, reduction=\"add\"", List.of(x23, idx22, upd22), f32(shape(2, 3), 21, 2, 13, 74, 5, 6)));
        c.add(of("scatter_elements", "reduction=\"max\"", List.of(x23, i32(shape(1, 3), 1, 0, 1), f32(shape(1, 3), 7, 8, 9)),
                f32(shape(2, 3), 1, 8, 3, 7, 5, 9)));
        c.add(of("scatter_elements", "reduction=\"min\"", List.of(x23, i32(shape(1, 3), 1, 0, 1), f32(shape(1, 3), 7, 8, 9)),
                f32(shape(2, 3), 1, 2, 3, 4, 5, 6)));
        c.add(of("scatter_elements", "reduction=\"mul\"", List.of(i64(shape(2, 2), 1, 2, 3, 4), i64(shape(2, 2), 1, 1, 1, 0),
                i64(shape(2, 2), 2, 3, 5, 7)), i64(shape(2, 2), 1, 14, 30, 12)));

        // scatter_nd: columns of indices (M, Y..) name slices of data replaced or folded with updates Y + data[M:]
        c.add(of("scatter_nd", "", List.of(x23, i64(shape(1, 2), 1, -2), f32(shape(2, 3), 7, 8, 9, 10, 11, 12)),
                f32(shape(2, 3), 10, 11, 12, 7, 8, 9)));
        c.add(of("scatter_nd", "mode=\"add\"", List.of(x23, i64(shape(2, 2), 1, 1, 2, 2), f32(shape(2), 5, 6)),
                f32(shape(2, 3), 1, 2, 3, 4, 5, 17)));
        c.add(of("scatter_nd", "mode=\"min\"", List.of(x23, i64(shape(2, 2), 1, 1, 2, 2), f32(shape(2), 5, 7)),
                f32(shape(2, 3), 1, 2, 3, 4, 5, 5)));

        // reinterpret: the same bytes read as another dtype of the same width.
        c.add(of("reinterpret", "dtype=\"int32\"", List.of(f32(shape(2), 1, -2)), i32(shape(2), 1065353216, -1073741824)));
        c.add(of("reinterpret", "dtype=\"uint8\"", List.of(arr(DType.INT8, shape(2), -1, 5)), arr(DType.UINT8, shape(2), 255, 5)));
        return c.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void kernelMatchesHandComputedValues(KernelCase k) {
        OpDef<?> op = OpRegistry.get(k.op());
        List<NDArray> actual = op.compute(k.inputs(), OpTestText.attrs(k.attrs()));
        assertEquals(k.expected().size(), actual.size(), "number of outputs");
        for (int i = 0; i < actual.size(); i++) {
            assertTrue(k.expected().get(i).contentEquals(actual.get(i)),
                    "output " + i + "\n  expected " + k.expected().get(i) + "\n  actual   " + actual.get(i));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void relationPredictsKernelOutputType(KernelCase k) {
        List<Type> inputs = new ArrayList<>();
        for (NDArray a : k.inputs()) inputs.add(typeOf(a));
        if (k.tupleInput()) inputs = List.of(new TupleType(inputs));
        Type predicted = OpRegistry.get(k.op()).inferOutput(inputs, OpTestText.attrs(k.attrs())).orElseThrow();
        List<Type> fields = predicted instanceof TupleType t ? t.fields() : List.of(predicted);
        assertEquals(k.expected().size(), fields.size(), "outputs predicted by the relation: " + predicted);
        for (int i = 0; i < fields.size(); i++) {
            TensorType p = (TensorType) fields.get(i);
            NDArray e = k.expected().get(i);
            assertEquals(e.dtype(), p.dtype(), "dtype of output " + i);
            assertEquals(e.rank(), p.rank(), "rank of output " + i + ": " + p);
            for (int d = 0; d < e.rank(); d++) {
                Dim pd = p.shape().get(d);
                assertTrue(pd instanceof Dim.Any || pd.equals(Dim.of(e.dim(d))), "output " + i + " predicted " + p + " but kernel gave " + e);
            }
        }
    }

    private static TensorType typeOf(NDArray a) {
        return TensorType.of(a.dtype(), java.util.Arrays.stream(a.shape()).asLongStream().toArray());
    }

    @Test
    void everyTransformOpHasKernelCases() {
        Set<String> covered = cases().map(KernelCase::op).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>();
        for (OpDef<?> def : TransformOps.defs()) if (!covered.contains(def.name())) missing.add(def.name());
        assertEquals(Set.of(), missing, "transform operators without a kernel test case");
    }

    @Test
    void everyTransformOpIsRegistered() {
        for (OpDef<?> def : TransformOps.defs()) assertEquals(def, OpRegistry.get(def.name()));
    }
}
