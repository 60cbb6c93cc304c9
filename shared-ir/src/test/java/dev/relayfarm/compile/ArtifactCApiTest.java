package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An artifact runs without a JVM: a small C program, built with the host compiler against lib.so,
 * drives the C API (relayfarm_num_inputs/outputs, create, set_num_threads, run twice, destroy,
 * last_error) on raw float32 files, and its outputs equal the interpreter's.
 */
class ArtifactCApiTest {
    @TempDir
    Path tmp;

    /** Reads raw inputs, runs the model twice (the second run reuses the arena), writes raw outputs; errors go to stderr with exit 1. */
    static final String RUNNER = """
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>

            void* relayfarm_create(const char* dir);
            int relayfarm_run(void* model, void* const* inputs, void* const* outputs);
            int relayfarm_set_num_threads(void* model, int n);
            void relayfarm_destroy(void* model);
            const char* relayfarm_last_error(void);
            int relayfarm_num_inputs(void);
            int relayfarm_num_outputs(void);

            static void* load(const char* path, size_t bytes) {
                void* p = NULL;
                if (posix_memalign(&p, 64, bytes)) return NULL;
                FILE* f = fopen(path, "rb");
                if (!f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\\n", path); exit(1); }
                fclose(f);
                return p;
            }

            /* usage: runner DIR in0 bytes0 in1 bytes1 ... -- out0 bytes0 ... */
            int main(int argc, char** argv) {
                int ni = relayfarm_num_inputs(), no = relayfarm_num_outputs();
                if (argc != 2 + 2 * (ni + no) + 1) { fprintf(stderr, "model has %d inputs, %d outputs\\n", ni, no); return 1; }
                void* bogus = relayfarm_create("/nonexistent/artifact");
                if (bogus || !strstr(relayfarm_last_error(), "/nonexistent/artifact/params.bin")) { fprintf(stderr, "bad dir accepted\\n"); return 1; }
                void* m = relayfarm_create(argv[1]);
                if (!m) { fprintf(stderr, "create: %s\\n", relayfarm_last_error()); return 1; }
                if (relayfarm_set_num_threads(m, 1) != 0) { fprintf(stderr, "threads: %s\\n", relayfarm_last_error()); return 1; }
                void* in[16]; void* out[16]; size_t outBytes[16];
                int a = 2;
                for (int i = 0; i < ni; i++, a += 2) in[i] = load(argv[a], (size_t) atol(argv[a + 1]));
                a++; /* "--" */
                for (int i = 0; i < no; i++, a += 2) {
                    outBytes[i] = (size_t) atol(argv[a + 1]);
                    if (posix_memalign(&out[i], 64, outBytes[i])) return 1;
                }
                for (int rep = 0; rep < 2; rep++) {
                    if (relayfarm_run(m, in, out) != 0) { fprintf(stderr, "run: %s\\n", relayfarm_last_error()); return 1; }
                }
                a = 2 + 2 * ni + 1;
                for (int i = 0; i < no; i++, a += 2) {
                    FILE* f = fopen(argv[a], "wb");
                    if (!f || fwrite(out[i], 1, outBytes[i], f) != outBytes[i]) { fprintf(stderr, "cannot write %s\\n", argv[a]); return 1; }
                    fclose(f);
                    free(out[i]);
                }
                for (int i = 0; i < ni; i++) free(in[i]);
                relayfarm_destroy(m);
                printf("ok %d inputs %d outputs\\n", ni, no);
                return 0;
            }
            """;

    @Test
    void aCProgramRunsTheArtifactThroughItsCApi() throws Exception {
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler: skipped");
        IRModule m = GraphPlanTest.optimized(ArtifactTest.SMALL);
        Path dir = tmp.resolve("model");
        ArtifactCompiler.compile(m, CompileOptions.host(3), dir);
        Path src = tmp.resolve("runner.c");
        Files.writeString(src, RUNNER);
        Path exe = tmp.resolve("runner");
        Path lib = dir.resolve("lib.so").toAbsolutePath();
        // Linked against lib.so by path: no JVM, no relayfarm code but the artifact's own.
        exec(List.of(cc.command(), "-std=c99", "-D_POSIX_C_SOURCE=200112L", "-O1", "-o", exe.toString(), src.toString(), lib.toString(),
                "-Wl,-rpath," + dir.toAbsolutePath(), "-lm"), "compiling runner.c");

        NDArray x = ArtifactTest.random(1, 2, 8), w = ArtifactTest.random(2, 4, 8);
        List<String> cmd = new ArrayList<>(List.of(exe.toString(), dir.toAbsolutePath().toString()));
        for (var e : List.of(x, w)) {
            Path f = tmp.resolve("in" + cmd.size() + ".bin");
            Files.write(f, bytes(e));
            cmd.add(f.toString());
            cmd.add(Long.toString(e.elementCount() * 4L));
        }
        cmd.add("--");
        int[][] outShapes = {{2, 4}, {2, 4}};
        for (int i = 0; i < outShapes.length; i++) {
            cmd.add(tmp.resolve("out" + i + ".bin").toString());
            cmd.add(Long.toString(NDArray.elementCount(DType.FLOAT32, outShapes[i]) * 4L));
        }
        String stdout = exec(cmd, "running the artifact from C");
        assertTrue(stdout.contains("ok 2 inputs 2 outputs"), stdout);

        TupleValue want = (TupleValue) Interpreter.runMain(m, x, w);
        for (int i = 0; i < outShapes.length; i++) {
            float[] got = floats(Files.readAllBytes(tmp.resolve("out" + i + ".bin")));
            NDArray e = ((TensorValue) want.fields().get(i)).data();
            assertEquals(e.elementCount(), got.length);
            for (int k = 0; k < got.length; k++) assertEquals(e.getDouble(k), got[k], 1e-5 * Math.max(1, Math.abs(e.getDouble(k))), "output " + i + "[" + k + "]");
        }
    }

    private static String exec(List<String> cmd, String what) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), what + " timed out");
        assertEquals(0, p.exitValue(), what + " failed: " + String.join(" ", cmd) + "\n" + out);
        return out;
    }

    private static byte[] bytes(NDArray a) {
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(a.elementCount() * 4L)).order(ByteOrder.nativeOrder());
        for (int i = 0; i < a.elementCount(); i++) b.putFloat((float) a.getDouble(i));
        return b.array();
    }

    private static float[] floats(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        float[] f = new float[bytes.length / 4];
        for (int i = 0; i < f.length; i++) f[i] = b.getFloat();
        return f;
    }
}
