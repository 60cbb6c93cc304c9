package dev.relayfarm.frontend;

/**
 * An ONNX file that cannot be read or imported: the message names the file and, where it applies,
 * the node (name, op type, opset) or tensor at fault.
 */
public class OnnxFormatException extends RuntimeException {
    public OnnxFormatException(String message) {
        super(message);
    }

    public OnnxFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
