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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.algorithm.AlgorithmOps;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** cumsum/cumprod, topk, einsum, det, argwhere, unique: reference kernels against hand-computed values, and their relations. */
class AlgorithmOpsTest {

    static Stream<KernelCase> cases() {
        NDArray x23 = f32(shape(2, 3), 1, 2, 3, 4, 5, 6);
        List<KernelCase> c = new ArrayList<>();

        // cumsum / cumprod: per axis, flattened without an axis, exclusive, dtype override, integers.
        c.add(of("cumsum", "axis=1", List.of(x23), f32(shape(2, 3), 1, 3, 6, 4, 9, 15)));
        c.add(of("cumsum", "axis=0", List.of(x23), f32(shape(2, 3), 1, 2, 3, 5, 7, 9)));
        c.add(of("cumsum", "", List.of(x23), f32(shape(6), 1, 3, 6, 10, 15, 21)));
        c.add(of("cumsum", "axis=-1, exclusive=True", List.of(x23), f32(shape(2, 3), 0, 1, 3, 0, 4, 9)));
        c.add(of("cumsum", "axis=0, dtype=\"int64\"", List.of(i32(shape(3), 2, -5, 7)), i64(shape(3), 2, -3, 4)));
        c.add(of("cumprod", "axis=1", List.of(x23), f32(shape(2, 3), 1, 2, 6, 4, 20, 120)));
        c.add(of("cumprod", "axis=0, exclusive=True", List.of(i32(shape(4), 2, 3, 4, 5)), i32(shape(4), 1, 2, 6, 24)));

        // topk: both results, ascending, ties keep the lower index first, values only, k < 1 = all.
        NDArray ties = f32(shape(2, 4), 3, 1, 3, 2, 0, 5, 5, 5);
        c.add(of("topk", "k=2", List.of(ties), f32(shape(2, 2), 3, 3, 5, 5), i32(shape(2, 2), 0, 2, 1, 2)));
        c.add(of("topk", "k=3, is_ascend=True, dtype=\"int64\"", List.of(ties), f32(shape(2, 3), 1, 2, 3, 0, 5, 5),
                i64(shape(2, 3), 1, 3, 0, 0, 1, 2)));
        c.add(of("topk", "k=1, axis=0, ret_type=\"values\"", List.of(ties), f32(shape(1, 4), 3, 5, 5, 5)));
        c.add(of("topk", "k=0, ret_type=\"indices\"", List.of(i32(shape(3), 7, 9, 8)), i32(shape(3), 1, 2, 0)));

        // einsum: matmul, batch matmul, transpose, trace/diagonal, implicit output, ellipsis broadcast, outer product.
        NDArray b = f32(shape(3, 2), 1, 0, 0, 1, 1, 1);
        c.add(tuple("einsum", "equation=\"ij,jk->ik\"", List.of(x23, b), f32(shape(2, 2), 4, 5, 10, 11)));
        c.add(tuple("einsum", "equation=\"ij->ji\"", List.of(x23), f32(shape(3, 2), 1, 4, 2, 5, 3, 6)));
        c.add(tuple("einsum", "equation=\"ii->\"", List.of(f32(shape(2, 2), 1, 2, 3, 4)), f32(shape(), 5)));
        c.add(tuple("einsum", "equation=\"ii->i\"", List.of(f32(shape(2, 2), 1, 2, 3, 4)), f32(shape(2), 1, 4)));
        c.add(tuple("einsum", "equation=\"ij,jk\"", List.of(x23, b), f32(shape(2, 2), 4, 5, 10, 11)));
        c.add(tuple("einsum", "equation=\"bij,bjk->bik\"", List.of(iota(DType.FLOAT32, 2, 1, 2), iota(DType.FLOAT32, 2, 2, 1)),
                f32(shape(2, 1, 1), 1, 13)));
        c.add(tuple("einsum", "equation=\"...j,j->...\"", List.of(x23, f32(shape(3), 1, 0, -1)), f32(shape(2), -2, -2)));
        c.add(tuple("einsum", "equation=\"i,j->ij\"", List.of(i32(shape(2), 1, 2), i32(shape(3), 1, 10, 100)),
                i32(shape(2, 3), 1, 10, 100, 2, 20, 200)));

        // det: 2x2, a batch with a row swap (sign flip) and a singular matrix; argwhere: row-major coordinates.
        c.add(of("det", "", List.of(f32(shape(2, 2), 1, 2, 3, 4)), f32(shape(), -2)));
        c.add(of("det", "", List.of(f32(shape(2, 3, 3), 0, 1, 0, 1, 0, 0, 0, 0, 2, 1, 2, 3, 2, 4, 6, 0, 1, 1)), f32(shape(2), -2, 0)));
        c.add(of("argwhere", "", List.of(arr(DType.BOOL, shape(2, 3), 0, 1, 0, 1, 0, 1)), i32(shape(3, 2), 0, 1, 1, 0, 1, 2)));
        c.add(of("argwhere", "", List.of(f32(shape(3), 0, 0, 0)), i32(shape(0, 1))));

        // unique: sorted and first-occurrence order, flattened and along an axis.
        NDArray u = f32(shape(6), 2, 1, 1, 3, 4, 3);
        c.add(of("unique", "", List.of(u), f32(shape(4), 1, 2, 3, 4), i64(shape(4), 1, 0, 3, 4), i64(shape(6), 1, 0, 0, 2, 3, 2),
                i64(shape(4), 2, 1, 2, 1)));
        c.add(of("unique", "sorted=False", List.of(u), f32(shape(4), 2, 1, 3, 4), i64(shape(4), 0, 1, 3, 4), i64(shape(6), 0, 1, 1, 2, 3, 2),
                i64(shape(4), 1, 2, 2, 1)));
        c.add(of("unique", "axis=1", List.of(i32(shape(2, 3), 2, 1, 2, 0, 5, 0)), i32(shape(2, 2), 1, 2, 5, 0), i64(shape(2), 1, 0),
                i64(shape(3), 1, 0, 1), i64(shape(2), 1, 2)));
        return c.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void kernelMatchesHandComputedValues(KernelCase k) {
        List<NDArray> actual = OpRegistry.get(k.op()).compute(k.inputs(), OpTestText.attrs(k.attrs()));
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
        for (NDArray a : k.inputs()) inputs.add(TensorType.of(a.dtype(), java.util.Arrays.stream(a.shape()).asLongStream().toArray()));
        if (k.tupleInput()) inputs = List.of(new TupleType(inputs));
        Type predicted = OpRegistry.get(k.op()).inferOutput(inputs, OpTestText.attrs(k.attrs())).orElseThrow();
        List<Type> fields = predicted instanceof TupleType t ? t.fields() : List.of(predicted);
        assertEquals(k.expected().size(), fields.size(), "outputs predicted by the relation: " + predicted);
        for (int i = 0; i < fields.size(); i++) {
            NDArray e = k.expected().get(i);
            TensorType p = (TensorType) fields.get(i);
            assertEquals(e.dtype(), p.dtype(), "dtype of output " + i);
            assertEquals(e.rank(), p.rank(), "rank of output " + i + ": " + p);
            for (int d = 0; d < e.rank(); d++) {
                Dim pd = p.shape().get(d);
                assertTrue(pd instanceof Dim.Any || pd.equals(Dim.of(e.dim(d))), "output " + i + " predicted " + p + " but kernel gave " + e);
            }
        }
    }

    @Test
    void relationsRejectBadArguments() {
        TensorType x = TensorType.of(DType.FLOAT32, 2, 3);
        RelationException e1 = assertThrows(RelationException.class,
                () -> OpRegistry.get("topk").inferOutput(List.of(x), OpTestText.attrs("k=4")));
        assertEquals("topk: k=4 is larger than the axis 1 of (2, 3)", e1.getMessage());
        RelationException e2 = assertThrows(RelationException.class, () -> OpRegistry.get("einsum")
                .inferOutput(List.of(new TupleType(List.of(x, x))), OpTestText.attrs("equation=\"ij,jk->ik\"")));
        assertEquals("einsum: a label of 'ij,jk->ik' has sizes 3 and 2 in different places", e2.getMessage());
        RelationException e3 = assertThrows(RelationException.class,
                () -> OpRegistry.get("cumsum").inferOutput(List.of(x), OpTestText.attrs("axis=2")));
        assertEquals("cumsum: axis must be in [-2, 1], got 2", e3.getMessage());
        // Symbolic dims pass through.
        Type dyn = OpRegistry.get("cumsum").inferOutput(List.of(new TensorType(List.of(Dim.ANY, Dim.of(3)), DType.FLOAT32)),
                OpTestText.attrs("axis=1")).orElseThrow();
        assertEquals(new TensorType(List.of(Dim.ANY, Dim.of(3)), DType.FLOAT32), dyn);
    }

    @Test
    void everyAlgorithmOpHasKernelCasesAndIsRegistered() {
        Set<String> covered = cases().map(KernelCase::op).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>();
        for (OpDef<?> def : AlgorithmOps.defs()) {
            if (!covered.contains(def.name())) missing.add(def.name());
            assertEquals(def, OpRegistry.get(def.name()));
        }
        assertEquals(Set.of(), missing, "algorithm operators without a kernel test case");
    }
}
