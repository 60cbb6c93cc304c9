package dev.relayfarm.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Message;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.NeedsConstantException;
import dev.relayfarm.frontend.OnnxDTypes;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.OnnxValues;
import dev.relayfarm.frontend.ValueLayout;
import dev.relayfarm.frontend.UnsupportedOpException;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
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

    /**
     * {@code tolerance} null means the folder's manifest or ONNX's default; {@code optimize} is applied
     * to the imported module before it runs (the pass pipeline at some -O level; identity for -O0).
     */
    public record Options(ImportOptions importOptions, Tolerance tolerance, java.util.function.UnaryOperator<IRModule> optimize, Backend backend) {
        public static final Options DEFAULT = new Options(ImportOptions.DEFAULT, null);

        public Options(ImportOptions importOptions, Tolerance tolerance) {
            this(importOptions, tolerance, java.util.function.UnaryOperator.identity());
        }

        public Options(ImportOptions importOptions, Tolerance tolerance, java.util.function.UnaryOperator<IRModule> optimize) {
            this(importOptions, tolerance, optimize, Backend.INTERPRETER);
        }
    }

    /** What runs the optimized module on the inputs: the interpreter, or e.g. a compiled artifact. */
    @FunctionalInterface
    public interface Backend {
        Backend INTERPRETER = (module, inputs) -> Interpreter.runMain(module, inputs.toArray(NDArray[]::new));

        Value run(IRModule module, List<NDArray> inputs);
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
        options = bindDynamicInputs(tc, options);
        try {
            options = bindStructuredInputs(tc, dir, options);
        } catch (UnsupportedOpException e) {
            return new Result(name, Status.SKIP, e.getMessage(), e.what(), 0, 0);
        } catch (RuntimeException e) {
            return new Result(name, Status.ERROR, "load: " + e.getMessage(), "load", 0, 0);
        }
        long t0 = System.nanoTime();
        List<String> fed = tc.fedInputs().stream().map(v -> v.getName()).toList();
        List<String> frozen = new ArrayList<>();
        IRModule module;
        try {
            module = importFreezing(tc, dir, options.importOptions(), fed, frozen);
        } catch (UnsupportedOpException e) {
            return new Result(name, Status.SKIP, e.getMessage(), e.what(), 0, 0);
        } catch (RuntimeException e) {
            return new Result(name, Status.ERROR, "import: " + e.getMessage(), "import", 0, 0);
        }
        long importMillis = (System.nanoTime() - t0) / 1_000_000;
        long t1 = System.nanoTime();
        for (OnnxTestCase.DataSet ds : tc.dataSets()) {
            if (!frozen.isEmpty() && ds != tc.dataSets().getFirst()) {
                // Frozen values differ per data set, so each set gets its own import.
                try {
                    module = OnnxImporter.importModel(tc.model(), "model.onnx", dir,
                            options.importOptions().withFrozenInputs(frozenValues(ds, dir, fed, frozen)));
                } catch (RuntimeException e) {
                    return new Result(name, Status.ERROR, "import (" + ds.dir().getFileName() + "): " + e.getMessage(), "import", importMillis, 0);
                }
            }
            List<NDArray> inputs = new ArrayList<>();
            for (int k = 0; k < ds.inputs().size(); k++) {
                Message m = ds.inputs().get(k);
                if (k < fed.size() && frozen.contains(fed.get(k))) continue;
                try {
                    // a sequence or optional gives its tensors, flattened as its parameters are (ValueLayout)
                    inputs.addAll(OnnxValues.flatten(OnnxValues.read(m, dir, ds.dir() + " input " + k)));
                } catch (UnsupportedOpException e) {
                    return new Result(name, Status.SKIP, e.getMessage(), e.what(), importMillis, 0);
                }
            }
            IRModule optimized;
            try {
                optimized = options.optimize().apply(module);
            } catch (RuntimeException e) {
                return new Result(name, Status.ERROR, "optimize: " + e.getMessage(), "optimize", importMillis, 0);
            }
            Value result;
            try {
                result = options.backend().run(optimized, inputs);
            } catch (RuntimeException e) {
                return new Result(name, Status.ERROR, "run: " + e.getMessage(), "run", importMillis, 0);
            }
            List<Value> outs = ds.outputs().size() == 1 ? List.of(result)
                    : result instanceof TupleValue tv ? tv.fields() : List.of(result);
            if (outs.size() != ds.outputs().size()) {
                return new Result(name, Status.FAIL, "produced " + outs.size() + " outputs, expected " + ds.outputs().size(), "outputs", importMillis, 0);
            }
            for (int i = 0; i < outs.size(); i++) {
                OnnxValues.Read expected;
                try {
                    expected = OnnxValues.read(ds.outputs().get(i), dir, ds.dir() + " output " + i);
                } catch (UnsupportedOpException e) {
                    return new Result(name, Status.SKIP, e.getMessage(), e.what(), importMillis, 0);
                }
                Optional<Difference> mm = compare(outs.get(i), expected, tol, "output " + i);
                if (mm.isPresent()) {
                    String set = tc.dataSets().size() > 1 ? ds.dir().getFileName() + " " : "";
                    return new Result(name, Status.FAIL, set + mm.get().message(), mm.get().numeric() ? "numerics" : "outputs", importMillis,
                            (System.nanoTime() - t1) / 1_000_000);
                }
            }
        }
        return new Result(name, Status.PASS, "", "", importMillis, (System.nanoTime() - t1) / 1_000_000);
    }

    /**
     * Imports the test's model. Many node tests feed operands that must be constant at import time
     * (axes, shape, pads, repeats, ...) as graph inputs; when the import fails with a
     * {@link NeedsConstantException}, the graph input that is that value, or the integer and bool
     * graph inputs it is computed from, are frozen to the first data set's values and the import is retried (until it succeeds or
     * nothing new can be frozen). {@code frozen} receives the frozen input names.
     */
    static IRModule importFreezing(OnnxTestCase tc, Path dir, ImportOptions options, List<String> fed, List<String> frozen) {
        while (true) {
            try {
                if (frozen.isEmpty()) return OnnxImporter.importModel(tc.model(), "model.onnx", dir, options);
                return OnnxImporter.importModel(tc.model(), "model.onnx", dir,
                        options.withFrozenInputs(frozenValues(tc.dataSets().getFirst(), dir, fed, frozen)));
            } catch (NeedsConstantException e) {
                if (tc.dataSets().isEmpty()) throw e;
                OnnxTestCase.DataSet first = tc.dataSets().getFirst();
                // An input that is itself the needed value is frozen whatever its dtype (OneHot's depth
                // may be float); inputs it is computed from only when integer or bool.
                List<String> more = e.graphInputs().stream()
                        .filter(in -> !frozen.contains(in) && fed.contains(in)
                                && (in.equals(e.value()) || freezable(first, dir, fed.indexOf(in)))).toList();
                if (more.isEmpty()) throw e;
                frozen.addAll(more);
            }
        }
    }

    /** Integer and bool inputs are the shape-like operands; float data stays a parameter. */
    private static boolean freezable(OnnxTestCase.DataSet ds, Path dir, int index) {
        if (index < 0 || index >= ds.inputs().size() || !(ds.inputs().get(index) instanceof TensorProto t)) return false;
        var dtype = OnnxDTypes.toDType(t.getDataType());
        return dtype.isPresent() && (dtype.get().isInteger() || dtype.get().isBool());
    }

    private static java.util.Map<String, NDArray> frozenValues(OnnxTestCase.DataSet ds, Path dir, List<String> fed, List<String> names) {
        java.util.Map<String, NDArray> values = new java.util.HashMap<>();
        for (String in : names) {
            TensorProto t = (TensorProto) ds.inputs().get(fed.indexOf(in));
            values.put(in, OnnxTensors.toNDArray(t, dir, ds.dir().toString()));
        }
        return values;
    }

    /**
     * A check runs the model on concrete data, so graph inputs the model leaves dynamic are bound
     * to the shapes of that data (unless the caller bound shapes itself, or the data sets disagree):
     * operators whose output size depends on an input dim (Resize, ConvTranspose with
     * output_shape) then import as they would with {@code --shape}.
     */
    static Options bindDynamicInputs(OnnxTestCase tc, Options options) {
        if (!options.importOptions().inputShapes().isEmpty() || tc.dataSets().isEmpty()) return options;
        List<dev.relayfarm.frontend.proto.Onnx.ValueInfoProto> fed = tc.fedInputs();
        java.util.Map<String, List<Long>> bound = new java.util.HashMap<>();
        for (int i = 0; i < fed.size(); i++) {
            var tt = fed.get(i).getType().getTensorType();
            boolean dynamic = !tt.hasShape() || tt.getShape().getDimList().stream().anyMatch(d -> !d.hasDimValue() || d.getDimValue() < 0);
            if (!dynamic || !fed.get(i).getType().hasTensorType()) continue;
            List<Long> shape = null;
            for (OnnxTestCase.DataSet ds : tc.dataSets()) {
                if (i >= ds.inputs().size() || !(ds.inputs().get(i) instanceof TensorProto t)) return options;
                List<Long> s = t.getDimsList();
                if (shape != null && !shape.equals(s)) return options;
                shape = s;
            }
            bound.put(fed.get(i).getName(), shape);
        }
        return bound.isEmpty() ? options : new Options(options.importOptions().withInputShapes(bound), options.tolerance(), options.optimize(), options.backend());
    }

    /** How an output differs from the expected value; {@code numeric}: in its numbers (else in its structure). */
    record Difference(String message, boolean numeric) {}

    /**
     * How {@code actual} differs from {@code expected}, if it does: a tensor within {@code tol}; a
     * sequence element by element (a tuple of as many); an optional as the empty tuple or the 1-tuple of
     * its value (the importer's representation, see {@code SequenceConverters}).
     */
    static Optional<Difference> compare(Value actual, OnnxValues.Read expected, Tolerance tol, String what) {
        switch (expected) {
            case OnnxValues.TensorRead t -> {
                if (!(actual instanceof TensorValue tv)) return Optional.of(new Difference(what + " is not a tensor", false));
                return tol.compare(tv.data(), t.data()).map(m -> new Difference(what + ": " + m.message(), true));
            }
            case OnnxValues.SequenceRead s -> {
                if (!(actual instanceof TupleValue tv)) return Optional.of(new Difference(what + " is not a sequence (a tuple)", false));
                if (tv.fields().size() != s.elements().size()) {
                    return Optional.of(new Difference(what + " has " + tv.fields().size() + " elements, expected " + s.elements().size(), false));
                }
                for (int k = 0; k < tv.fields().size(); k++) {
                    Optional<Difference> m = compare(tv.fields().get(k), s.elements().get(k), tol, what + " element " + k);
                    if (m.isPresent()) return m;
                }
                return Optional.empty();
            }
            case OnnxValues.OptionalRead o -> {
                if (!(actual instanceof TupleValue tv) || tv.fields().size() > 1) {
                    return Optional.of(new Difference(what + " is not an optional (a tuple of 0 or 1 values)", false));
                }
                int want = o.element() == null ? 0 : 1;
                if (tv.fields().size() != want) {
                    return Optional.of(new Difference(what + " is " + (want == 0 ? "present, expected an empty optional" : "empty, expected a value"), false));
                }
                return want == 0 ? Optional.empty() : compare(tv.fields().getFirst(), o.element(), tol, what + " value");
            }
        }
    }

    /**
     * Sequence and optional graph inputs import with the structure of the data they are run on (a
     * sequence's length and element shapes: {@link dev.relayfarm.frontend.ValueLayout}), taken from
     * the data sets, which must agree.
     */
    static Options bindStructuredInputs(OnnxTestCase tc, Path dir, Options options) {
        if (tc.dataSets().isEmpty()) return options;
        List<dev.relayfarm.frontend.proto.Onnx.ValueInfoProto> fed = tc.fedInputs();
        java.util.Map<String, ValueLayout> layouts = new java.util.HashMap<>(options.importOptions().valueLayouts());
        for (int i = 0; i < fed.size(); i++) {
            if (fed.get(i).getType().hasTensorType() || layouts.containsKey(fed.get(i).getName())) continue;
            ValueLayout layout = null;
            for (OnnxTestCase.DataSet ds : tc.dataSets()) {
                if (i >= ds.inputs().size()) return options;
                ValueLayout l = OnnxValues.layout(OnnxValues.read(ds.inputs().get(i), dir, ds.dir() + " input " + i));
                if (layout != null && !layout.equals(l)) return options;
                layout = l;
            }
            layouts.put(fed.get(i).getName(), layout);
        }
        if (layouts.equals(options.importOptions().valueLayouts())) return options;
        return new Options(options.importOptions().withValueLayouts(layouts), options.tolerance(), options.optimize(), options.backend());
    }

    /** A folder's manifest.json may set "rtol"/"atol" (with its reason beside them). */
    public static Optional<Tolerance> manifestTolerance(Path dir) {
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
