package dev.relayfarm.conformance;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.relayfarm.frontend.OnnxFormatException;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.OptionalProto;
import dev.relayfarm.frontend.proto.Onnx.SequenceProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * One ONNX backend test folder: {@code model.onnx} plus {@code test_data_set_K/input_N.pb} and
 * {@code output_N.pb}. A data file holds a TensorProto, SequenceProto or OptionalProto according to
 * the type of the graph input/output it belongs to.
 */
public record OnnxTestCase(Path dir, ModelProto model, List<DataSet> dataSets) {

    /** One data set: values in graph input / output order. */
    public record DataSet(Path dir, List<Message> inputs, List<Message> outputs) {}

    public String name() {
        return dir.getFileName().toString();
    }

    /** The graph inputs the data sets feed, in data-file order. */
    public List<ValueInfoProto> fedInputs() {
        return fedInputs(model);
    }

    /** Graph inputs that are initializers are not fed by test data (old-style models list both). */
    private static List<ValueInfoProto> fedInputs(ModelProto model) {
        Set<String> initializers = new HashSet<>();
        model.getGraph().getInitializerList().forEach(t -> initializers.add(t.getName()));
        return model.getGraph().getInputList().stream().filter(v -> !initializers.contains(v.getName())).toList();
    }

    public static OnnxTestCase load(Path dir) {
        Path modelFile = dir.resolve("model.onnx");
        ModelProto model = OnnxModels.read(modelFile);
        List<ValueInfoProto> fed = fedInputs(model);
        List<DataSet> sets = new ArrayList<>();
        try (Stream<Path> children = Files.list(dir)) {
            for (Path set : children.filter(p -> p.getFileName().toString().startsWith("test_data_set_")).sorted().toList()) {
                sets.add(new DataSet(set, readAll(set, "input_", fed), readAll(set, "output_", model.getGraph().getOutputList())));
            }
        } catch (IOException e) {
            throw new OnnxFormatException(dir + ": cannot list test data: " + e.getMessage(), e);
        }
        return new OnnxTestCase(dir, model, sets);
    }

    private static List<Message> readAll(Path set, String prefix, List<ValueInfoProto> infos) {
        List<Message> out = new ArrayList<>();
        for (int i = 0; ; i++) {
            Path file = set.resolve(prefix + i + ".pb");
            if (!Files.exists(file)) break;
            TypeProto type = i < infos.size() ? infos.get(i).getType() : TypeProto.getDefaultInstance();
            out.add(readData(file, type));
        }
        return out;
    }

    /** Reads one data file as the message kind its declared type calls for. */
    public static Message readData(Path file, TypeProto type) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            return switch (type.getValueCase()) {
                case SEQUENCE_TYPE -> SequenceProto.parseFrom(bytes);
                case OPTIONAL_TYPE -> OptionalProto.parseFrom(bytes);
                default -> TensorProto.parseFrom(bytes);
            };
        } catch (InvalidProtocolBufferException e) {
            throw new OnnxFormatException(file + ": not a valid ONNX data file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new OnnxFormatException(file + ": cannot read: " + e.getMessage(), e);
        }
    }
}
