package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * int8 x int8 -> int32 products ({@code out_dtype="int32"}), what realized quantized models compute:
 * the artifact gives the interpreter's integers exactly. The dense templates accumulate in the data's
 * dtype, so such a dense must take the generic compute (it once summed in int8 into an int32 buffer).
 */
class IntegerProductCompileTest {
    @TempDir
    Path tmp;

    private static final String PROGRAM = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 2, 6, 6), int8], %w: Tensor[(3, 2, 3, 3), int8], %v: Tensor[(4, 27), int8]) {
              %0 = nn.conv2d(%x, %w, padding=[1, 1], out_dtype="int32");
              %1 = right_shift(add(multiply(cast(nn.relu(%0), dtype="int64"), 1073741824i64), 1073741824i64), 31i64);
              %2 = cast(clip(%1, a_min=-127f, a_max=127f), dtype="int8");
              %3 = reshape(nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]), newshape=[1, 27]);
              (%0, nn.dense(%3, %v, out_dtype="int32"))
            }
            """;

    @Test
    void int8ProductsAccumulateInInt32LikeTheInterpreter() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        var typed = TypeInference.infer(RelayParser.parseModule(PROGRAM, "int8")).module();
        List<NDArray> in = List.of(int8(1, 1, 2, 6, 6), int8(2, 3, 2, 3, 3), int8(3, 4, 27));
        Value want = Interpreter.runMain(typed, in.toArray(new NDArray[0]));
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(dev.relayfarm.passes.OptPipeline.optimize(typed, 3), CompileOptions.host(3), tmp.resolve("a"));
        try (CompiledModel cm = CompiledModel.load(art.dir())) {
            List<NDArray> got = cm.run(in);
            List<Value> fields = ((TupleValue) want).fields();
            assertEquals(2, got.size());
            for (int i = 0; i < 2; i++) {
                NDArray w = ((TensorValue) fields.get(i)).data();
                assertEquals(DType.INT32, got.get(i).dtype());
                assertTrue(w.contentEquals(got.get(i)), "output " + i + ": artifact " + got.get(i) + " vs interpreter " + w);
            }
        }
    }

    /** Values spread over the whole int8 range, so an int8 accumulator would overflow. */
    private static NDArray int8(int seed, int... shape) {
        Random r = new Random(seed);
        NDArray a = NDArray.zeros(DType.INT8, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setLong(i, r.nextInt(255) - 127);
        return a;
    }
}
