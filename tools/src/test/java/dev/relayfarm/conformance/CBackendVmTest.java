package dev.relayfarm.conformance;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.text.RelayParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The c backend of relayc check / conformance runs what the graph executor refuses on the VM, and names both refusals when neither can. */
class CBackendVmTest {
    static IRModule optimized(String text) {
        return OptPipeline.optimize(RelayParser.parseModule("#[version = \"0.0.5\"]\n" + text, "t.relay"), 3);
    }

    @Test
    void recursionRunsOnTheVm() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = optimized("""
                def @twice(%x: Tensor[(2, 3), float32], %n: int32) -> Tensor[(2, 3), float32] {
                  if (%n <= 0) { %x } else { @twice(%x * 2f, %n - 1) }
                }
                def @main(%x: Tensor[(2, 3), float32], %n: int32) -> (Tensor[(2, 3), float32], int32) {
                  (@twice(exp(%x), %n), %n + 1)
                }
                """);
        // the graph executor refuses the recursion, so what runs below is the VM
        assertThrows(GraphException.class, () -> dev.relayfarm.compile.GraphBuilder.build(m));
        NDArray x = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT32, new int[] {2, 3}, new double[] {0, 1, 2, -1, 0.5, 3});
        for (int n : new int[] {1, 5}) {
            Value got = new CBackend(CompileOptions.host(3), 1).run(m, List.of(x, NDArray.scalar(n)));
            Value want = Interpreter.runMain(m, x, NDArray.scalar(n));
            TupleValue g = assertInstanceOf(TupleValue.class, got), w = (TupleValue) want;
            NDArray gy = ((TensorValue) g.fields().get(0)).data(), wy = ((TensorValue) w.fields().get(0)).data();
            for (int i = 0; i < 6; i++) assertEquals(wy.getDouble(i), gy.getDouble(i), 1e-5, "n=" + n + " element " + i);
            assertEquals(n + 1, ((TensorValue) g.fields().get(1)).data().getLong(0));
        }
    }

    @Test
    void whatNeitherRunsNamesBoth() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        // a dynamic width resized to a fixed one: no static shape for the graph executor, no merged width kernel for the VM
        IRModule m = optimized("def @main(%x: Tensor[(1, 3, 8, ?), float32]) { image.resize2d(%x, size=[8, 8]) }\n");
        GraphException e = assertThrows(GraphException.class,
                () -> new CBackend(CompileOptions.host(3), 1).run(m, List.of(NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 1, 3, 8, 12))));
        assertTrue(e.getMessage().contains("the VM cannot run it either") && e.getMessage().contains("fused_image_resize2d"), e.getMessage());
    }
}
