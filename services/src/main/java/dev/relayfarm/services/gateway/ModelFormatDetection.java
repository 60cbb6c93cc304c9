package dev.relayfarm.services.gateway;

import dev.relayfarm.pipeline.ModelFormat;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Which of the importer's two {@link ModelFormat}s an upload is.
 *
 * <p>The gateway only decides which importer to use; it does not check the model itself: a malformed ONNX file must
 * become a job that FAILS in the import stage with the importer's message, not a 400 here. The file name decides
 * first ({@code .onnx}; {@code .relay}, {@code .rly}, {@code .txt}); otherwise the content: an ONNX {@code ModelProto}
 * starts with field 1 ({@code ir_version}, a varint: tag byte {@code 0x08}) in every exporter we know, and Relay
 * text is UTF-8 text.
 */
final class ModelFormatDetection {
    private ModelFormatDetection() {}

    /** The explicit {@code format} field of a submit, if given. */
    static ModelFormat named(String name) {
        for (ModelFormat f : ModelFormat.values()) if (f.wireName.equals(name.trim().toLowerCase(Locale.ROOT))) return f;
        throw new ApiProblem(ProblemType.BAD_FORMAT, "format must be 'onnx' or 'relay', got '" + name + "'");
    }

    static ModelFormat detect(String fileName, byte[] bytes) {
        String name = fileName == null ? "" : fileName.toLowerCase(Locale.ROOT);
        if (name.endsWith(".onnx")) return ModelFormat.ONNX;
        if (name.endsWith(".relay") || name.endsWith(".rly") || name.endsWith(".txt")) return ModelFormat.RELAY;
        if (bytes.length > 0 && bytes[0] == 0x08) return ModelFormat.ONNX;
        if (isUtf8Text(bytes)) return ModelFormat.RELAY;
        throw new ApiProblem(ProblemType.BAD_FORMAT, "cannot tell the format of model '" + fileName
                + "': not named *.onnx / *.relay, not an ONNX ModelProto (first byte 0x08) and not UTF-8 text;"
                + " name the file or pass format=onnx|relay");
    }

    private static boolean isUtf8Text(byte[] bytes) {
        try {
            String s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
            // Control characters other than whitespace mean binary data that happens to decode.
            return s.chars().noneMatch(c -> c < 0x20 && c != '\n' && c != '\r' && c != '\t');
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
