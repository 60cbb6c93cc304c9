package dev.relayfarm.e2e;

import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Path;
import java.util.List;

/**
 * An artifact the farm built, checked as {@code relayc check --backend c} checks one it built itself: the ONNX
 * test folder's inputs go through the downloaded artifact, every output is compared with the folder's reference
 * output at the folder's tolerance (its manifest.json, else ONNX's rtol 1e-3 / atol 1e-7). OnnxCheck imports the
 * model locally only to know the inputs; what runs is the farm's lib.so.
 */
final class ArtifactCheck {
    private ArtifactCheck() {}

    static OnnxCheck.Result check(Path testFolder, Path artifactDir) {
        try (CompiledModel model = CompiledModel.load(artifactDir)) {
            OnnxCheck.Backend artifact = (module, inputs) -> value(model.run(inputs));
            return OnnxCheck.check(testFolder, new OnnxCheck.Options(ImportOptions.DEFAULT, null, m -> m, artifact));
        }
    }

    private static Value value(List<NDArray> outputs) {
        if (outputs.size() == 1) return new TensorValue(outputs.getFirst());
        return new TupleValue(outputs.stream().<Value>map(TensorValue::new).toList());
    }
}
