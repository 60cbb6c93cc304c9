package dev.relayfarm.pipeline;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/**
 * The two model formats the pipeline imports; {@link #wireName} is how jobs, messages and the REST API spell it.
 * {@link #detect} is the one rule that tells an unnamed model's format, for {@code relayc} and the gateway alike.
 */
public enum ModelFormat {
    ONNX("onnx"),
    RELAY("relay");

    /** The diagnostic code of a format that is unknown or cannot be told. */
    public static final String UNKNOWN_FORMAT = "unknown-format";

    public final String wireName;

    ModelFormat(String wireName) {
        this.wireName = wireName;
    }

    /** The format spelled {@code name} ({@code "onnx"} or {@code "relay"}, any case, blanks around ignored); a {@link ModelInputException} otherwise. */
    public static ModelFormat of(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (ModelFormat f : values()) if (f.wireName.equals(n)) return f;
        throw new ModelInputException(UNKNOWN_FORMAT, "unknown model format '" + name + "', expected onnx or relay");
    }

    /**
     * What a model is, from its file name first ({@code .onnx}; {@code .relay}, {@code .rly}, {@code .txt}), else from its
     * content: an ONNX {@code ModelProto} starts with field 1 ({@code ir_version}, a varint: tag byte {@code 0x08}) in
     * every exporter we know, and Relay text is UTF-8 text. Empty when neither tells. The gateway only picks the
     * importer with it: a malformed ONNX file still becomes a job that fails in the import stage with the importer's
     * message.
     */
    public static Optional<ModelFormat> detect(String fileName, byte[] bytes) {
        String name = fileName == null ? "" : fileName.toLowerCase(Locale.ROOT);
        if (name.endsWith(".onnx")) return Optional.of(ONNX);
        if (name.endsWith(".relay") || name.endsWith(".rly") || name.endsWith(".txt")) return Optional.of(RELAY);
        if (bytes.length > 0 && bytes[0] == 0x08) return Optional.of(ONNX);
        if (isUtf8Text(bytes)) return Optional.of(RELAY);
        return Optional.empty();
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
