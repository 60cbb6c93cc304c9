package dev.relayfarm.pipeline;

/** The two model formats the pipeline imports; {@link #wireName} is how jobs, messages and the REST API spell it. */
public enum ModelFormat {
    ONNX("onnx"),
    RELAY("relay");

    public final String wireName;

    ModelFormat(String wireName) {
        this.wireName = wireName;
    }

    /** The format spelled {@code name} ({@code "onnx"} or {@code "relay"}); a {@link ModelInputException} otherwise. */
    public static ModelFormat of(String name) {
        for (ModelFormat f : values()) if (f.wireName.equals(name)) return f;
        throw new ModelInputException("unknown model format '" + name + "', expected onnx or relay");
    }

    /** What a file name says: {@code .onnx} is ONNX, anything else Relay text (the CLI's rule). */
    public static ModelFormat ofFileName(String fileName) {
        return fileName.endsWith(".onnx") ? ONNX : RELAY;
    }
}
