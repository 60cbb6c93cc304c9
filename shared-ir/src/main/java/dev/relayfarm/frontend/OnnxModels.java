package dev.relayfarm.frontend;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Reads ONNX model files, with clear errors for missing or malformed files. */
public final class OnnxModels {
    private OnnxModels() {}

    public static ModelProto read(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new OnnxFormatException(file + ": cannot read: " + e.getMessage(), e);
        }
        return parse(bytes, file.toString());
    }

    /** A model from its bytes (an upload, a blob); {@code name} is how errors refer to it. */
    public static ModelProto parse(byte[] bytes, String name) {
        try {
            ModelProto m = ModelProto.parseFrom(bytes);
            if (!m.hasGraph()) throw new OnnxFormatException(name + ": not an ONNX model (no graph)");
            return m;
        } catch (InvalidProtocolBufferException e) {
            throw new OnnxFormatException(name + ": not a valid ONNX model: " + e.getMessage(), e);
        }
    }

    /** Opset version per domain ("" and "ai.onnx" are the default domain, stored under ""). */
    public static Map<String, Long> opsets(ModelProto m) {
        Map<String, Long> out = new HashMap<>();
        for (OperatorSetIdProto o : m.getOpsetImportList()) {
            String domain = o.getDomain().equals("ai.onnx") ? "" : o.getDomain();
            out.put(domain, o.getVersion());
        }
        return out;
    }
}
