package dev.relayfarm.quantize.qdq;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.passes.PassException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads named tensors of an ONNX graph through our own importer: the model is imported with those names as its
 * outputs. A tensor that depends on no graph input arrives as a constant (the importer folds it: an initializer, a
 * {@code Constant} node, the light models' {@code ConstantOfShape} weights alike), so the exporter needs no ONNX
 * evaluator of its own; any other tensor is sampled by running the imported graph on inputs with the interpreter,
 * as {@code Calibration} samples its points.
 */
final class TensorProbe {
    private TensorProbe() {}

    /** The values of those of {@code names} that are constants; the others are left out. */
    static Map<String, NDArray> constants(ModelProto model, List<String> names, Path baseDir, ImportOptions options) {
        Map<String, NDArray> out = new LinkedHashMap<>();
        if (names.isEmpty()) return out;
        List<Expr> fields = outputs(probe(model, names, baseDir, options));
        for (int i = 0; i < names.size(); i++) if (fields.get(i) instanceof Constant c) out.put(names.get(i), c.data());
        return out;
    }

    /** Each of {@code names}' values on each input list: {@code [name][input]} as float32 arrays. */
    static Map<String, List<float[]>> samples(ModelProto model, List<String> names, Path baseDir, ImportOptions options, List<List<NDArray>> inputs) {
        Map<String, List<float[]>> out = new LinkedHashMap<>();
        for (String n : names) out.put(n, new ArrayList<>());
        if (names.isEmpty()) return out;
        IRModule m = probe(model, names, baseDir, options);
        Interpreter interp = new Interpreter(m);
        for (List<NDArray> in : inputs) {
            Value v = interp.call("main", in.toArray(new NDArray[0]));
            List<Value> fields = names.size() == 1 ? List.of(v) : ((TupleValue) v).fields();
            for (int i = 0; i < names.size(); i++) out.get(names.get(i)).add(floats(((TensorValue) fields.get(i)).data()));
        }
        return out;
    }

    private static IRModule probe(ModelProto model, List<String> names, Path baseDir, ImportOptions options) {
        GraphProto.Builder g = model.getGraph().toBuilder().clearOutput();
        for (String n : names) g.addOutput(ValueInfoProto.newBuilder().setName(n));
        return OnnxImporter.importModel(model.toBuilder().setGraph(g).build(), "qdq-probe", baseDir, options);
    }

    private static List<Expr> outputs(IRModule m) {
        Expr body = m.main().orElseThrow(() -> new PassException("the probe has no @main")).body();
        return body instanceof Tuple t ? t.fields() : List.of(body);
    }

    private static float[] floats(NDArray a) {
        if (a.dtype().equals(DType.FLOAT32)) return a.floatData();
        float[] f = new float[a.elementCount()];
        for (int i = 0; i < f.length; i++) f[i] = (float) a.getDouble(i);
        return f;
    }
}
