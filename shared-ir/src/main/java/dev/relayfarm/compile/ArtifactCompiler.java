package dev.relayfarm.compile;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CEmitter;
import dev.relayfarm.kernel.codegen.CompileException;
import dev.relayfarm.process.ChildProcess;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.PrimitiveLowering;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.runtime.TensorSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Compiles an optimized module (after fuse-ops) into an artifact directory (ARCHITECTURE.md §6):
 *
 * <pre>
 *   manifest.json    inputs, outputs, target, kernels (workload + schedule config), memory plan,
 *                    SHA-256 of every file, compiler versions, and the artifact's content hash
 *   lib.so           kernels + graph executor (absent for a cross target without a cross compiler)
 *   params.bin       the constants ({@link ParamsFile})
 *   src/kernels.c    the generated kernels
 *   src/entry.c      the graph executor ({@link EntryPointEmitter}); lib.so = cc kernels.c + entry.c
 * </pre>
 *
 * The output is a function of the module and the options only (no timestamps, no absolute paths),
 * so compiling twice gives byte-identical files and the same content hash.
 */
public final class ArtifactCompiler {
    public static final String FORMAT = "relayfarm-artifact/1";
    public static final String VERSION = "0.1.0";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ArtifactCompiler() {}

    /** What was written. {@code note} explains a missing lib.so. */
    public record Artifact(Path dir, String contentHash, boolean hasLibrary, Optional<String> note, GraphPlan graph, MemoryPlan memory,
                           List<LoweredKernel> kernels) {}

    public static Artifact compile(IRModule optimized, CompileOptions options, Path dir) {
        CompileLimits limits = options.limits();
        GraphPlan graph = GraphBuilder.build(optimized);
        // the bounds that make codegen's work (lowering, emitting, the C compiler) finite, checked before any of it
        if (graph.kernels().size() > limits.maxKernels()) {
            throw new ArtifactLimitException("the model needs " + graph.kernels().size() + " kernels, the limit is " + limits.maxKernels()
                    + " (relayfarm.limits.max-kernels)");
        }
        if (graph.steps().size() > limits.maxSteps()) {
            throw new ArtifactLimitException("the model needs " + graph.steps().size() + " executor steps (kernel calls and copies), the limit is "
                    + limits.maxSteps() + " (relayfarm.limits.max-steps)");
        }
        MemoryPlan memory = MemoryPlanner.plan(graph);
        MemoryPlanner.check(memory, graph, limits);
        ParamsFile.Layout layout = ParamsFile.layout(graph.paramSpecs());
        List<LoweredKernel> kernels = new ArrayList<>();
        for (GraphPlan.Kernel k : graph.kernels()) kernels.add(lower(k, options));
        List<LoweredFunc> funcs = kernels.stream().map(LoweredKernel::func).toList();
        String kernelsC = CEmitter.emit(funcs);
        String entryC = EntryPointEmitter.emit(graph, memory, layout);
        long sourceBytes = (long) kernelsC.length() + entryC.length();
        if (sourceBytes > limits.maxSourceBytes()) {
            throw new ArtifactLimitException("the model's generated C is " + CompileLimits.bytes(sourceBytes) + " (" + kernels.size() + " kernels, "
                    + graph.steps().size() + " steps), the limit is " + CompileLimits.bytes(limits.maxSourceBytes()) + " (relayfarm.limits.max-source-bytes)");
        }
        try {
            Files.createDirectories(dir.resolve("src"));
            for (String stale : List.of("lib.so", "params.bin", "manifest.json")) Files.deleteIfExists(dir.resolve(stale));
            Files.writeString(dir.resolve("src/kernels.c"), kernelsC);
            Files.writeString(dir.resolve("src/entry.c"), entryC);
            String paramsHash = ParamsFile.write(dir.resolve("params.bin"), graph.params(), layout);
            Optional<CCompiler> cc = CCompiler.forTarget(options.target()).map(c -> c.withTimeout(limits.compileTimeout()));
            Optional<String> note = Optional.empty();
            String libHash = null;
            if (cc.isPresent()) {
                // One translation unit: the kernels, then the executor (its prototypes repeat the kernels' definitions).
                Path so;
                try {
                    so = cc.get().compile(kernelsC + "\n" + entryC);
                } catch (CompileException e) {
                    // Out of time is the model's limit, not a passing fault: a retry would hold the codegen thread (and
                    // every job queued behind it) for the whole timeout again. The default timeout is far above any
                    // real model's compile, so load alone does not trip it.
                    if (!(e.getCause() instanceof ChildProcess.TimeoutException)) throw e;
                    throw new ArtifactLimitException("the model's generated C (" + kernels.size() + " kernels, " + (kernelsC.length() + entryC.length())
                            + " characters) took the C compiler longer than the compile timeout of "
                            + ChildProcess.seconds(limits.compileTimeout())
                            + " (relayfarm.limits.compile-timeout); the compiler was killed");
                }
                Files.copy(so, dir.resolve("lib.so"), StandardCopyOption.REPLACE_EXISTING);
                libHash = sha256(Files.readAllBytes(dir.resolve("lib.so")));
            } else if (options.target().isCross()) {
                note = Optional.of("no cross compiler for " + options.target().triple() + " (tried " + String.join(", ", options.target().crossCompilerCandidates())
                        + "): sources only; build with: " + options.target().triple() + "-gcc -O3 " + String.join(" ", options.target().compilerFlags())
                        + " -ffp-contract=fast -fopenmp-simd -pthread -shared -fPIC -std=c99 -o lib.so src/kernels.c src/entry.c -lm");
            } else {
                throw new ArtifactException("no C compiler found (set $CC, or install cc, gcc or clang)");
            }
            ObjectNode manifest = manifest(graph, memory, layout, kernels, options, cc, note);
            ObjectNode files = manifest.putObject("files");
            files.put("lib.so", libHash);
            files.put("params.bin", paramsHash);
            files.put("src/entry.c", sha256(entryC.getBytes(StandardCharsets.UTF_8)));
            files.put("src/kernels.c", sha256(kernelsC.getBytes(StandardCharsets.UTF_8)));
            String contentHash = sha256(JSON.writeValueAsBytes(manifest));
            manifest.put("content_hash", contentHash);
            Files.writeString(dir.resolve("manifest.json"), JSON.writeValueAsString(manifest) + "\n");
            return new Artifact(dir, contentHash, libHash != null, note, graph, memory, kernels);
        } catch (IOException e) {
            throw new ArtifactException("cannot write the artifact to " + dir + ": " + e.getMessage(), e);
        }
    }

    private static LoweredKernel lower(GraphPlan.Kernel k, CompileOptions options) {
        LoweredKernel def = lowerWithDefault(k, options.target());
        ScheduleConfig tuned = options.schedules().get(def.workload());
        if (tuned == null || tuned.equals(def.config())) return def;
        try {
            return PrimitiveLowering.lower(k.primitive(), k.name(), options.target(), Optional.of(tuned));
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedKernelException(k.name(), e);
        }
    }

    /**
     * {@code k} lowered with its template's default configuration: how every kernel is lowered first, to learn
     * the workload key its schedule is looked up by ({@link CompileOptions#schedules()}).
     */
    public static LoweredKernel lowerWithDefault(GraphPlan.Kernel k, Target target) {
        try {
            return PrimitiveLowering.lower(k.primitive(), k.name(), target, Optional.empty());
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedKernelException(k.name(), e);
        }
    }

    private static ObjectNode manifest(GraphPlan g, MemoryPlan mem, ParamsFile.Layout layout, List<LoweredKernel> kernels, CompileOptions options,
                                       Optional<CCompiler> cc, Optional<String> note) {
        ObjectNode m = JSON.createObjectNode();
        m.put("format", FORMAT);
        ObjectNode compiler = m.putObject("compiler");
        compiler.put("relayfarm", VERSION);
        compiler.put("cc", cc.map(CCompiler::identity).orElse(null));
        ArrayNode flags = compiler.putArray("flags");
        cc.ifPresent(c -> c.flags().forEach(flags::add));
        m.put("target", options.target().toString());
        ArrayNode features = m.putArray("target_features");
        options.target().features().forEach(features::add);
        m.put("opt_level", options.optLevel());
        m.put("lib", cc.isPresent() ? "lib.so" : null);
        note.ifPresent(n -> m.put("note", n));
        ObjectNode entry = m.putObject("entry");
        entry.put("create", "relayfarm_create");
        entry.put("run", "relayfarm_run");
        entry.put("set_num_threads", "relayfarm_set_num_threads");
        entry.put("destroy", "relayfarm_destroy");
        entry.put("last_error", "relayfarm_last_error");
        tensors(m.putArray("inputs"), g.inputs());
        tensors(m.putArray("outputs"), g.outputs());
        ObjectNode params = m.putObject("params");
        params.put("file", "params.bin");
        params.put("count", g.params().size());
        params.put("data_bytes", layout.dataBytes());
        ArrayNode ps = params.putArray("tensors");
        for (int i = 0; i < g.paramSpecs().size(); i++) {
            ObjectNode p = tensor(g.paramSpecs().get(i));
            p.put("offset", layout.offsets().get(i));
            ps.add(p);
        }
        ObjectNode memory = m.putObject("memory");
        memory.put("arena_bytes", mem.arenaBytes());
        memory.put("intermediate_bytes", g.tempBytes());
        memory.put("intermediates", g.temps().size());
        memory.put("blocks", mem.blockSizes().size());
        ArrayNode ks = m.putArray("kernels");
        int[] calls = new int[kernels.size()];
        for (Step s : g.steps()) if (s instanceof Step.KernelCall k) calls[k.kernel()]++;
        for (int i = 0; i < kernels.size(); i++) {
            LoweredKernel k = kernels.get(i);
            ObjectNode n = ks.addObject();
            n.put("name", k.func().name());
            n.put("workload", k.workload());
            if (k.config() != null) {
                try {
                    n.set("config", JSON.readTree(k.config().toJson()));
                } catch (IOException e) {
                    throw new IllegalStateException("a schedule config is plain JSON", e);
                }
            } else {
                n.putNull("config");
            }
            n.put("calls", calls[i]);
        }
        m.put("steps", g.steps().size());
        return m;
    }

    private static void tensors(ArrayNode out, List<TensorSpec> specs) {
        for (TensorSpec s : specs) out.add(tensor(s));
    }

    private static ObjectNode tensor(TensorSpec s) {
        ObjectNode n = JSON.createObjectNode();
        n.put("name", s.name());
        ArrayNode shape = n.putArray("shape");
        s.shape().forEach(shape::add);
        n.put("dtype", s.dtype().toString());
        return n;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
