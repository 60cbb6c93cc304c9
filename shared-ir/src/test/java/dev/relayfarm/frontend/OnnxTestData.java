package dev.relayfarm.frontend;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the ONNX test data lives. The data is never part of this repository: CI has it in
 * {@code ../shared/onnx/{node,models,light}} beside the checkout; a Debian machine can get 932 node
 * tests with {@code apt-get install libonnx-testdata}. Overrides: system property
 * {@code relayfarm.onnx.dir} or environment variable {@code RELAYFARM_ONNX_DIR} (a folder holding
 * {@code node/}, {@code models/}, {@code light/}).
 */
public final class OnnxTestData {
    public static final Path DEBIAN_NODE_TESTS = Path.of("/usr/share/libonnx-testdata/data/node");

    private OnnxTestData() {}

    /** The folder holding node/, models/ and light/, if any can be found. */
    public static Optional<Path> root() {
        String configured = System.getProperty("relayfarm.onnx.dir", System.getenv("RELAYFARM_ONNX_DIR"));
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            return Files.isDirectory(p) ? Optional.of(p) : Optional.empty();
        }
        // Walk up from the working directory looking for a sibling shared/onnx (works from the repo
        // root and from a module directory).
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared").resolve("onnx");
            if (Files.isDirectory(candidate)) return Optional.of(candidate);
        }
        return Optional.empty();
    }

    /** The ONNX backend node tests: ours, else Debian's libonnx-testdata. */
    public static Optional<Path> nodeTests() {
        Optional<Path> p = root().map(r -> r.resolve("node")).filter(Files::isDirectory);
        if (p.isPresent()) return p;
        return Files.isDirectory(DEBIAN_NODE_TESTS) ? Optional.of(DEBIAN_NODE_TESTS) : Optional.empty();
    }

    public static Optional<Path> models() {
        return root().map(r -> r.resolve("models")).filter(Files::isDirectory);
    }

    public static Optional<Path> light() {
        return root().map(r -> r.resolve("light")).filter(Files::isDirectory);
    }
}
