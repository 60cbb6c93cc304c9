package dev.relayfarm.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Message;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs one ONNX test folder end to end — load, import, type-check, evaluate, compare every output
 * of every data set — and classifies the outcome: PASS; FAIL (wrong numbers, with the max error and
 * where); ERROR (import, type or run error, with its message); SKIP (an operator or element type
 * we do not support, named).
 */
public final class OnnxCheck {
    public enum Status { PASS, FAIL, ERROR, SKIP }

    /** The outcome of one folder; {@code op} groups failures in reports (the unsupported op, or the stage). */
    public record Result(String name, Status status, String reason, String group, long importMillis, long runMillis) {
        public String line() {
            return switch (status) {
                case PASS -> "PASS " + name;
                case SKIP -> "SKIP " + name + " <unsupported " + group + ">";
                case FAIL, ERROR -> "FAIL " + name + " " + reason;
            };
        }
    }

    public record Options(ImportOptions importOptions, Tolerance tolerance) {
        public static final Options DEFAULT = new Options(ImportOptions.DEFAULT, null);
    }

    private OnnxCheck() {}

    public static Result check(Path dir, Options options) {
        String name = dir.getFileName().toString();
        OnnxTestCase tc;
        try {
            tc = OnnxTestCase.load(dir);
        } catch (RuntimeException e) {
            return new Result(name, Status.ERROR, "load: " + e.getMessage(), "load", 0, 0);
        }
        Tolerance tol = options.tolerance() != null ? options.tolerance() : manifestTolerance(dir).orElse(Tolerance.ONNX_DEFAULT);
        long t0 = System.nanoTime();
        IRModule module;
        try {
            module = OnnxImporter.importModel(tc.model(), "model.onnx", dir, options.importOptions());
        } catch (UnsupportedOpException e) {
            return new Result(name, Status.SKIP, e.getMessage(), e.what(), 0, 0);
        } catch (RuntimeException e) {
            return new Result(name, Status.ERROR, "import: " + e.getMessage(), "import", 0, 0);
        }
        long importMillis = (System.nanoTime() - t0) / 1_000_000;
        long t1 = System.nanoTime();
        for (OnnxTestCase.DataSet ds : tc.dataSets()) {
            List<NDArray> inputs = new ArrayList<>();
            for (Message m : ds.inputs()) {
                if (!(m instanceof TensorProto t)) {
                    return new Result(name, Status.SKIP, "non-tensor input", "sequence/optional values", importMillis, 0);
                }
                try {
                    inputs.add(OnnxTensors.toNDArray(t, dir, ds.dir().toString()));
                } catch (UnsupportedOpException e) {
                    return new Result(name, Status.SKIP, e.getMessage(), e.what(), importMillis, 0);
                }
            }
            Value result;
            try {
                result = Interpreter.runMain(module, inputs.toArray(NDArray[]::new));
            } catch (RuntimeException e) {
                return new Result(name, Status.ERROR, "run: " + e.getMessage(), "run", importMillis, 0);
            }
            List<Value> outs = ds.outputs().size() == 1 ? List.of(result)
                    : result instanceof TupleValue tv ? tv.fields() : List.of(result);
            if (outs.size() != ds.outputs().size()) {
                return new Result(name, Status.FAIL, "produced " + outs.size() + " outputs, expected " + ds.outputs().size(), "outputs", importMillis, 0);
            }
            for (int i = 0; i < outs.size(); i++) {
                if (!(ds.outputs().get(i) instanceof TensorProto t)) {
                    return new Result(name, Status.SKIP, "non-tensor output", "sequence/optional values", importMillis, 0);
                }
                NDArray expected;
                try {
                    expected = OnnxTensors.toNDArray(t, dir, ds.dir().toString());
                } catch (UnsupportedOpException e) {
                    return new Result(name, Status.SKIP, e.getMessage(), e.what(), importMillis, 0);
                }
                if (!(outs.get(i) instanceof TensorValue tv)) {
                    return new Result(name, Status.FAIL, "output " + i + " is not a tensor", "outputs", importMillis, 0);
                }
                Optional<Tolerance.Mismatch> mm = tol.compare(tv.data(), expected);
                if (mm.isPresent()) {
                    String set = tc.dataSets().size() > 1 ? ds.dir().getFileName() + " " : "";
                    return new Result(name, Status.FAIL, set + "output " + i + ": " + mm.get().message(), "numerics", importMillis,
                            (System.nanoTime() - t1) / 1_000_000);
                }
            }
        }
        return new Result(name, Status.PASS, "", "", importMillis, (System.nanoTime() - t1) / 1_000_000);
    }

    /** A folder's manifest.json may set "rtol"/"atol". */
    private static Optional<Tolerance> manifestTolerance(Path dir) {
        Path manifest = dir.resolve("manifest.json");
        if (!Files.isRegularFile(manifest)) return Optional.empty();
        try {
            JsonNode j = new ObjectMapper().readTree(manifest.toFile());
            if (!j.has("rtol") && !j.has("atol")) return Optional.empty();
            return Optional.of(new Tolerance(j.path("rtol").asDouble(Tolerance.ONNX_DEFAULT.rtol()), j.path("atol").asDouble(Tolerance.ONNX_DEFAULT.atol())));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
