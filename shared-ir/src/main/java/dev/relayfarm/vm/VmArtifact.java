package dev.relayfarm.vm;

import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.artifact.ScheduleSource;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.runtime.KernelLibrary;
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
 * A VM artifact directory: what {@code relayc compile} writes when the graph executor refuses a program
 * (control flow, closures, recursion, ADTs), and what {@code relayc run} loads:
 *
 * <pre>
 *   manifest.json    {@link VmManifest}: "executor": "vm", inputs, kernels, SHA-256 of every file, content hash
 *   vm.rfx           the executable ({@link ExecutableFormat})
 *   lib.so           the kernels the bytecode calls (absent when it calls none)
 *   src/kernels.c    their source
 * </pre>
 *
 * Deterministic like the graph artifact: the same module and options give the same bytes. Kernels only: the VM
 * loop is Java ({@link VirtualMachine}), so unlike a graph artifact this one needs a JVM to run.
 */
public final class VmArtifact {
    private VmArtifact() {}

    public record Written(Path dir, VmProgram program, VmManifest manifest) {}

    public static Written write(VmProgram program, CompileOptions options, Path dir) {
        Executable exe = program.executable();
        String kernelsC = program.kernels().isEmpty() ? null : program.kernelModule().source();
        try {
            Files.createDirectories(dir.resolve("src"));
            for (String stale : List.of("lib.so", ExecutableFormat.FILE, Manifest.FILE, "params.bin", "src/entry.c", "src/kernels.c")) Files.deleteIfExists(dir.resolve(stale));
            byte[] rfx = ExecutableFormat.toBytes(exe);
            Files.write(dir.resolve(ExecutableFormat.FILE), rfx);
            Map<String, String> files = new LinkedHashMap<>();
            Optional<CCompiler> cc = Optional.empty();
            if (kernelsC != null) {
                cc = CCompiler.forTarget(options.target()).map(c -> c.withTimeout(options.limits().compileTimeout()));
                if (cc.isEmpty()) throw new ArtifactException("no C compiler for " + options.target() + " (set $CC, or install cc, gcc or clang); the VM needs its kernels built");
                Files.writeString(dir.resolve("src/kernels.c"), kernelsC);
                Files.copy(cc.get().compile(kernelsC), dir.resolve("lib.so"), StandardCopyOption.REPLACE_EXISTING);
                files.put("lib.so", Sha256.hex(Files.readAllBytes(dir.resolve("lib.so"))));
                files.put("src/kernels.c", Sha256.hex(kernelsC.getBytes(StandardCharsets.UTF_8)));
            }
            files.put(ExecutableFormat.FILE, Sha256.hex(rfx));
            int[] calls = new int[exe.kernels().size()];
            for (VmFunction f : exe.functions()) for (Instruction i : f.code()) if (i instanceof Instruction.InvokePacked p) calls[p.kernel()]++;
            List<Manifest.Kernel> kernels = new ArrayList<>();
            for (int i = 0; i < program.kernels().size(); i++) {
                LoweredKernel k = program.kernels().get(i);
                kernels.add(new Manifest.Kernel(k.func().name(), k.workload(), k.config() == null ? null : Manifest.configTree(k.config().toJson()),
                        ScheduleSource.DEFAULT, calls[i]));
            }
            VmManifest manifest = new VmManifest(Manifest.FORMAT, VmManifest.EXECUTOR,
                    new Manifest.Compiler(ArtifactCompiler.VERSION, cc.map(CCompiler::identity).orElse(null), cc.map(CCompiler::flags).orElse(List.of())),
                    options.target().toString(), List.copyOf(options.target().features()), options.optLevel(), kernelsC == null ? null : "lib.so",
                    ExecutableFormat.FILE, program.inputs(), exe.functions().size(), exe.instructionCount(), kernels, files, null).withContentHash();
            Files.writeString(dir.resolve(Manifest.FILE), manifest.toJson() + "\n");
            return new Written(dir, program, manifest);
        } catch (IOException e) {
            throw new ArtifactException("cannot write the VM artifact to " + dir + ": " + e.getMessage(), e);
        }
    }

    /** A VM over the artifact in {@code dir}: its executable, and its lib.so bound to the executable's kernel signatures. */
    public static VirtualMachine load(Path dir) {
        return load(dir, VmManifest.read(dir));
    }

    /** {@link #load(Path)} with the artifact's manifest already read. */
    public static VirtualMachine load(Path dir, VmManifest manifest) {
        try {
            Executable exe = ExecutableFormat.read(dir.resolve(manifest.executable()));
            Optional<KernelLibrary> lib = manifest.lib() == null ? Optional.empty()
                    : Optional.of(KernelLibrary.load(dir.resolve(manifest.lib()).toAbsolutePath(), exe.kernels()));
            return new VirtualMachine(exe, lib);
        } catch (IOException e) {
            throw new ArtifactException("cannot read the VM artifact in " + dir + ": " + e.getMessage(), e);
        }
    }
}
