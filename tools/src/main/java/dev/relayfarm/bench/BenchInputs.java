package dev.relayfarm.bench;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.conformance.OnnxTestCase;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxDTypes;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The model a benchmark runs and the inputs it feeds: an ONNX test folder brings its first data set
 * (so the outputs are meaningful); a bare {@code .onnx} file gets seeded pseudo-random inputs of its
 * declared shapes, dynamic dims bound by {@code --shape NAME=D0xD1x...}.
 */
public record BenchInputs(String model, Path onnx, Map<String, List<Long>> shapes, List<NDArray> values) {
    /** The name a model is reported under: an ONNX test folder's name, or the file's without {@code .onnx} and {@code light_}. */
    public static String modelName(Path modelOrDir) {
        String file = modelOrDir.getFileName().toString();
        return Files.isDirectory(modelOrDir) ? file : file.replaceFirst("\\.onnx$", "").replaceFirst("^light_", "");
    }

    public static BenchInputs load(Path modelOrDir, Map<String, List<Long>> bound, long seed) {
        if (Files.isDirectory(modelOrDir) && Files.isRegularFile(modelOrDir.resolve("model.onnx"))) return fromTestFolder(modelOrDir, bound);
        if (!Files.isRegularFile(modelOrDir)) throw new IllegalArgumentException(modelOrDir + ": neither an .onnx file nor an ONNX test folder (DIR/model.onnx)");
        ModelProto m = OnnxModels.read(modelOrDir);
        String name = modelName(modelOrDir);
        Random random = new Random(seed);
        Map<String, List<Long>> shapes = new LinkedHashMap<>();
        List<NDArray> values = new ArrayList<>();
        for (ValueInfoProto in : fedInputs(m)) {
            String where = modelOrDir + ": input '" + in.getName() + "'";
            if (!in.getType().hasTensorType()) throw new IllegalArgumentException(where + " is not a tensor; the benchmark feeds tensors only");
            DType dt = OnnxDTypes.require(in.getType().getTensorType().getElemType(), where);
            List<Long> shape = shapeOf(in, bound.get(in.getName()), where);
            shapes.put(in.getName(), shape);
            values.add(random(dt, shape, random, where));
        }
        return new BenchInputs(name, modelOrDir, shapes, values);
    }

    /** The models in {@code folders} (ONNX test folders, {@code DIR/model.onnx}, and bare {@code .onnx} files), by name within each. */
    public static List<Path> models(List<Path> folders) throws IOException {
        List<Path> all = new ArrayList<>();
        for (Path folder : folders) {
            try (Stream<Path> entries = Files.list(folder)) {
                entries.filter(p -> Files.isRegularFile(p.resolve("model.onnx")) || p.toString().endsWith(".onnx")).sorted().forEach(all::add);
            }
        }
        return all;
    }

    /** Seeded pseudo-random values for an artifact's inputs (a model known only by its artifact: Relay text, a tuned module). */
    public static List<NDArray> random(List<TensorSpec> inputs, long seed) {
        return random(inputs, new Random(seed));
    }

    /** The same, drawing from {@code random}: several sets from one stream (calibration inputs, say). */
    public static List<NDArray> random(List<TensorSpec> inputs, Random random) {
        List<NDArray> values = new ArrayList<>();
        for (TensorSpec in : inputs) {
            values.add(random(in.dtype(), in.shape().stream().map(Integer::longValue).toList(), random, "input '" + in.name() + "'"));
        }
        return values;
    }

    private static BenchInputs fromTestFolder(Path dir, Map<String, List<Long>> bound) {
        OnnxTestCase tc = OnnxTestCase.load(dir);
        if (tc.dataSets().isEmpty()) throw new IllegalArgumentException(dir + ": no test_data_set_* folder");
        OnnxTestCase.DataSet ds = tc.dataSets().getFirst();
        List<ValueInfoProto> fed = fedInputs(tc.model());
        Map<String, List<Long>> shapes = new LinkedHashMap<>(bound);
        List<NDArray> values = new ArrayList<>();
        for (int i = 0; i < ds.inputs().size(); i++) {
            NDArray a = OnnxTensors.toNDArray((TensorProto) ds.inputs().get(i), dir, ds.dir().toString());
            values.add(a);
            List<Long> dims = new ArrayList<>();
            for (int d : a.shape()) dims.add((long) d);
            shapes.put(fed.get(i).getName(), dims);
        }
        return new BenchInputs(modelName(dir), dir.resolve("model.onnx"), shapes, values);
    }

    /** Graph inputs that are not initializers, in graph order. */
    static List<ValueInfoProto> fedInputs(ModelProto m) {
        Set<String> inits = new HashSet<>();
        m.getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        return m.getGraph().getInputList().stream().filter(v -> !inits.contains(v.getName())).toList();
    }

    private static List<Long> shapeOf(ValueInfoProto in, List<Long> bound, String where) {
        if (bound != null) {
            // inputs are real buffers: a dim left dynamic with '?' has no size to draw them at
            int any = bound.indexOf(ImportOptions.ANY_DIM);
            if (any >= 0) throw new IllegalArgumentException(where + ": dim " + any + " is bound to ?; give every dim a size to run it");
            return bound;
        }
        List<Long> shape = new ArrayList<>();
        List<TensorShapeProto.Dimension> dims = in.getType().getTensorType().getShape().getDimList();
        for (int d = 0; d < dims.size(); d++) {
            TensorShapeProto.Dimension dim = dims.get(d);
            if (!dim.hasDimValue() || dim.getDimValue() <= 0) {
                String sym = dim.hasDimParam() ? "'" + dim.getDimParam() + "'" : "?";
                throw new IllegalArgumentException(where + " has dynamic dim " + sym + " at axis " + d + ": bind it with --shape "
                        + in.getName() + "=D0xD1x...");
            }
            shape.add(dim.getDimValue());
        }
        return shape;
    }

    private static NDArray random(DType dt, List<Long> shape, Random random, String where) {
        int[] s = shape.stream().mapToInt(Math::toIntExact).toArray();
        NDArray a = NDArray.zeros(dt, s);
        int n = a.elementCount();
        if (dt.isFloat()) {
            for (int i = 0; i < n; i++) a.setDouble(i, random.nextDouble());
        } else if (dt.isInteger() || dt.isBool()) {
            // Small non-negative values: valid as indices and class ids for the models we benchmark.
            for (int i = 0; i < n; i++) a.setLong(i, random.nextInt(dt.isBool() ? 2 : 8));
        } else {
            throw new IllegalArgumentException(where + " has dtype " + dt + ", which the benchmark cannot generate");
        }
        return a;
    }
}
