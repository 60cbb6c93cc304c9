package dev.relayfarm.types;

import static dev.relayfarm.types.Ir.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Inference over the real operator registry (nn.conv2d, add, concatenate). */
class RegistryOpsInferenceTest {

    private static Attrs ints(String key, long... vs) {
        List<AttrValue> l = java.util.Arrays.stream(vs).mapToObj(v -> (AttrValue) new AttrValue.IntValue(v)).toList();
        return Attrs.of(key, new AttrValue.ListValue(l));
    }

    @Test
    void conv2dChannelMismatchIsReportedAtTheCall() {
        Var data = v("data", f32(1, 3, 32, 32));
        Var weight = v("weight", f32(16, 4, 3, 3));
        Call conv = new Call(Op.get("nn.conv2d"), List.of(data, weight), Attrs.EMPTY, List.of(), at(12, 9));
        TypeException e = assertThrows(TypeException.class,
                () -> TypeInference.infer(module("main", fn(List.of(data, weight), conv))));
        assertEquals("model.relay:12:9: nn.conv2d: input channels 3 (data) do not match weight (16, 4, 3, 3) with groups=1",
                e.errors().get(0).toString());
    }

    @Test
    void conv2dInfersTheWeightBackwardFromChannelsAndKernelSize() {
        Var data = v("data", f32(1, 3, 32, 32));
        Var weight = v("weight");
        Attrs attrs = ints("kernel_size", 3, 3).with("channels", new AttrValue.IntValue(16))
                .with("padding", new AttrValue.ListValue(List.of(new AttrValue.IntValue(1), new AttrValue.IntValue(1))));
        Call conv = new Call(Op.get("nn.conv2d"), List.of(data, weight), attrs);
        InferResult r = TypeInference.infer(module("main", fn(List.of(data, weight), conv)));
        assertEquals("fn (Tensor[(1, 3, 32, 32), float32], Tensor[(16, 3, 3, 3), float32]) -> Tensor[(1, 16, 32, 32), float32]",
                r.typeOf(gv("main")).toString());
        assertFullyTyped(r);
    }

    @Test
    void addWithSymbolicAndAnyDims() {
        TensorType xn = new TensorType(List.of(Dim.sym("n"), Dim.of(4)), DType.FLOAT32);
        TensorType any = new TensorType(List.of(Dim.ANY, Dim.of(4)), DType.FLOAT32);
        Var x = v("x", xn);
        Var y = v("y", any);
        InferResult r = TypeInference.infer(module("main", fn(List.of(x, y), op("add", x, y))));
        assertEquals("fn (Tensor[(n, 4), float32], Tensor[(?, 4), float32]) -> Tensor[(n, 4), float32]",
                r.typeOf(gv("main")).toString());
    }

    @Test
    void concatenateOfSymbolicDimsSimplifies() {
        TensorType xn = new TensorType(List.of(Dim.sym("n"), Dim.of(4)), DType.FLOAT32);
        Var x = v("x", xn);
        Call cat = new Call(Op.get("concatenate"), List.of(new dev.relayfarm.ir.Tuple(List.of(x, x))),
                Attrs.of("axis", new AttrValue.IntValue(0)));
        InferResult r = TypeInference.infer(module("main", fn(List.of(x), cat)));
        assertEquals("fn (Tensor[(n, 4), float32]) -> Tensor[(2 * n, 4), float32]", r.typeOf(gv("main")).toString());
    }
}
