package dev.relayfarm.compile;

import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.artifact.ScheduleSource;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CEmitter;
import dev.relayfarm.kernel.codegen.CompileException;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.lower.KernelPlan;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.PrimitiveLowering;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.process.ChildProcess;
import dev.relayfarm.serde.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Compiles an optimized module (after fuse-ops) into an artifact directory (ARCHITECTURE.md §6):
 *
 * <pre>
 *   manifest.json    inputs, outputs, target, kernels (workload, schedule config and its source), memory plan,
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
    public static final String VERSION = "0.1.0";

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
                libHash = Sha256.hex(Files.readAllBytes(dir.resolve("lib.so")));
            } else if (options.target().isCross()) {
                note = Optional.of("no cross compiler for " + options.target().triple() + " (tried " + String.join(", ", options.target().crossCompilerCandidates())
                        + "): sources only; build with: " + options.target().triple() + "-gcc -O3 " + String.join(" ", options.target().compilerFlags())
                        + " -ffp-contract=fast -fno-math-errno -fopenmp-simd -pthread -shared -fPIC -std=c99 -o lib.so src/kernels.c src/entry.c -lm");
            } else {
                throw new ArtifactException("no C compiler found (set $CC, or install cc, gcc or clang)");
            }
            Map<String, String> files = new LinkedHashMap<>();
            files.put("lib.so", libHash);
            files.put("params.bin", paramsHash);
            files.put("src/entry.c", Sha256.hex(entryC.getBytes(StandardCharsets.UTF_8)));
            files.put("src/kernels.c", Sha256.hex(kernelsC.getBytes(StandardCharsets.UTF_8)));
            Manifest manifest = manifest(graph, memory, layout, kernels, options, cc, note, files).withContentHash();
            Files.writeString(dir.resolve(Manifest.FILE), manifest.toJson() + "\n");
            String contentHash = manifest.contentHash();
            return new Artifact(dir, contentHash, libHash != null, note, graph, memory, kernels);
        } catch (IOException e) {
            throw new ArtifactException("cannot write the artifact to " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@code k} lowered once, with its stored schedule ({@link CompileOptions#schedules()}, by the workload key
     * its plan derives without lowering) or else its template's default. The VM compiler lowers its kernels here too.
     */
    public static LoweredKernel lower(GraphPlan.Kernel k, CompileOptions options) {
        KernelPlan plan = plan(k, options.target());
        ScheduleConfig config = options.schedules().getOrDefault(plan.workload(), plan.defaultConfig());
        try {
            return PrimitiveLowering.lower(plan, config);
        } catch (InvalidConfigException e) {
            // a stored schedule the template now refuses (records outlive template changes): the default is always valid
            if (config.equals(plan.defaultConfig())) throw e;
            return PrimitiveLowering.lower(plan, plan.defaultConfig());
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedKernelException(k.name(), e);
        }
    }

    /** What {@code k} is to schedule for {@code target} ({@link PrimitiveLowering#plan}); an op without a kernel is an {@link UnsupportedKernelException}. */
    public static KernelPlan plan(GraphPlan.Kernel k, Target target) {
        try {
            return PrimitiveLowering.plan(k.primitive(), k.name(), target);
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedKernelException(k.name(), e);
        }
    }

    private static Manifest manifest(GraphPlan g, MemoryPlan mem, ParamsFile.Layout layout, List<LoweredKernel> kernels, CompileOptions options,
                                     Optional<CCompiler> cc, Optional<String> note, Map<String, String> files) {
        List<Manifest.Param> params = new ArrayList<>();
        for (int i = 0; i < g.paramSpecs().size(); i++) {
            TensorSpec p = g.paramSpecs().get(i);
            params.add(new Manifest.Param(p.name(), p.shape(), p.dtype().toString(), layout.offsets().get(i)));
        }
        int[] calls = new int[kernels.size()];
        for (Step s : g.steps()) if (s instanceof Step.KernelCall k) calls[k.kernel()]++;
        List<Manifest.Kernel> ks = new ArrayList<>();
        for (int i = 0; i < kernels.size(); i++) {
            LoweredKernel k = kernels.get(i);
            // tuned (or transferred) only if it was built with the stored config, not the default it fell back to
            boolean stored = k.config() != null && k.config().equals(options.schedules().get(k.workload()));
            ks.add(new Manifest.Kernel(k.func().name(), k.workload(), k.config() == null ? null : Manifest.configTree(k.config().toJson()),
                    stored ? options.source(k.workload()) : ScheduleSource.DEFAULT, calls[i]));
        }
        return new Manifest(Manifest.FORMAT,
                new Manifest.Compiler(VERSION, cc.map(CCompiler::identity).orElse(null), cc.map(CCompiler::flags).orElse(List.of())),
                options.target().toString(), List.copyOf(options.target().features()), options.optLevel(), cc.isPresent() ? "lib.so" : null, note.orElse(null),
                new Manifest.Entry("relayfarm_create", "relayfarm_run", "relayfarm_set_num_threads", "relayfarm_destroy", "relayfarm_last_error",
                        "relayfarm_profile"),
                g.inputs().stream().map(Manifest.Tensor::of).toList(), g.outputs().stream().map(Manifest.Tensor::of).toList(),
                new Manifest.Params("params.bin", g.params().size(), layout.dataBytes(), params),
                new Manifest.Memory(mem.arenaBytes(), g.tempBytes(), g.temps().size(), mem.blockSizes().size()),
                ks, g.steps().size(), files, null);
    }
}
