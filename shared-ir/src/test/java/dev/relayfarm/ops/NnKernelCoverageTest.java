package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ops.image.ImageOps;
import dev.relayfarm.ops.nn.NnOps;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every operator NnOps and ImageOps register must have a kernel test: this table maps each to the
 * test that checks its kernel against hand-computed or naive-loop values, and runs them all. A new
 * operator without an entry fails here.
 */
class NnKernelCoverageTest {
    interface Check {
        void run() throws Exception;
    }

    static Map<String, Check> kernelTests() {
        Map<String, Check> m = new LinkedHashMap<>();
        m.put("nn.conv2d", () -> {
            new Conv2DTest().kernelByHand();
            new Conv2DTest().fastKernelMatchesNaiveLoopNchw();
        });
        m.put("nn.dense", () -> new DenseMatmulTest().denseByHand());
        m.put("nn.matmul", () -> new DenseMatmulTest().matmulRelationAndKernel());
        m.put("nn.batch_matmul", () -> new DenseMatmulTest().batchMatmulKernel());
        m.put("nn.bias_add", () -> new ActivationsTest().biasAdd());
        m.put("nn.relu", () -> new ActivationsTest().reluFamily());
        m.put("nn.leaky_relu", () -> new ActivationsTest().reluFamily());
        m.put("nn.prelu", () -> new ActivationsTest().prelu());
        m.put("nn.softmax", () -> new ActivationsTest().softmax());
        m.put("nn.log_softmax", () -> new ActivationsTest().softmax());
        m.put("nn.cross_entropy", () -> new LossTest().crossEntropy());
        m.put("nn.cross_entropy_with_logits", () -> new LossTest().crossEntropyWithLogits());
        m.put("nn.max_pool2d", () -> new PoolTest().maxPool());
        m.put("nn.avg_pool2d", () -> new PoolTest().avgPool());
        m.put("nn.max_pool3d", () -> new PoolTest().pool3dKernel());
        m.put("nn.avg_pool3d", () -> new PoolTest().pool3dKernel());
        m.put("nn.max_pool2d_with_argmax", () -> new PoolTest().maxPoolWithArgmax());
        m.put("nn.max_pool2d_grad", () -> new PoolGradTest().maxPoolGrad());
        m.put("nn.avg_pool2d_grad", () -> new PoolGradTest().avgPoolGrad());
        m.put("nn.global_avg_pool2d", () -> new PoolTest().globalPools());
        m.put("nn.global_max_pool2d", () -> new PoolTest().globalPools());
        m.put("nn.conv2d_transpose", () -> {
            new Conv2DTransposeTest().kernelByHand();
            new Conv2DTransposeTest().matchesNaiveScatter();
        });
        m.put("nn.conv3d_transpose", () -> new Conv2DTransposeTest().conv3dTransposeKernel());
        m.put("nn.batch_norm", () -> new NormalizationTest().batchNormKernel());
        m.put("nn.layer_norm", () -> new NormalizationTest().layerNorm());
        m.put("nn.lrn", () -> new NormalizationTest().lrn());
        m.put("nn.dropout", () -> new NormalizationTest().dropout());
        m.put("nn.pad", () -> new PadFlattenTest().padKernel());
        m.put("nn.batch_flatten", () -> new PadFlattenTest().batchFlatten());
        m.put("nn.contrib_conv2d_NCHWc", () -> new Conv2DNCHWcTest().kernelMatchesConv2dOnPackedData());
        m.put("nn.contrib_conv2d_winograd_weight_transform", () -> new WinogradConv2DTest().matchesConv2d());
        m.put("nn.contrib_conv2d_winograd_NCHWc", () -> new WinogradConv2DTest().matchesConv2d());
        m.put("annotation.simulated_quantize", () -> new SimulatedQuantizeTest().kernelByHand());
        m.put("image.resize2d", () -> {
            new Resize2DTest().nearest();
            new Resize2DTest().linear();
            new Resize2DTest().cubic();
        });
        m.put("image.grid_sample", () -> {
            new GridSampleTest().bilinearAndPadding();
            new GridSampleTest().nearest();
            new GridSampleTest().bicubic();
            new GridSampleTest().volumetric();
        });
        return m;
    }

    private static List<OpDef<?>> ours() {
        List<OpDef<?>> all = new ArrayList<>(NnOps.defs());
        all.addAll(ImageOps.defs());
        return all;
    }

    @Test
    void everyRegisteredOperatorHasAKernelTest() {
        List<String> missing = new ArrayList<>();
        for (OpDef<?> def : ours()) if (!kernelTests().containsKey(def.name())) missing.add(def.name());
        assertEquals(List.of(), missing, "operators without a kernel test entry");
        assertTrue(ours().size() >= 23, "NnOps/ImageOps register " + ours().size() + " operators");
    }

    @Test
    void theirKernelTestsPass() throws Exception {
        for (OpDef<?> def : ours()) {
            assertTrue(OpRegistry.find(def.name()).isPresent(), def.name() + " is not in the registry");
            kernelTests().get(def.name()).run();
        }
    }
}
