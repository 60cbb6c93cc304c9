package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.KernelLibrary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The fused groups of real models after {@code -O3} (alter-op-layout's NCHWc convolutions with their
 * epilogues, dense layers, injective and pooling groups): every group either lowers, or fails with
 * an error naming its operator and group; distinct workloads are compiled into one module and each
 * kernel is compared with the interpreter running the same Primitive function.
 */
class ModelGroupsTest {
    private static final Path SHARED = Path.of("../../shared/onnx").toAbsolutePath().normalize();
    /** Kernels compiled per model: gcc time grows with each; distinct workloads are taken first. */
    private static final int MAX_COMPILED = 10;

    private static List<Function> groups(IRModule module) {
        List<Function> out = new ArrayList<>();
        for (Expr e : ExprTraversal.postOrder(module.main().orElseThrow().body())) {
            if (e instanceof Function f && f.isPrimitive()) out.add(f);
        }
        return out;
    }

    private static Path model(String relative) {
        Path p = SHARED.resolve(relative);
        if (!Files.exists(p)) p = Path.of("../shared/onnx").resolve(relative).toAbsolutePath().normalize();
        Assumptions.assumeTrue(Files.exists(p), "model " + relative + " not found under " + SHARED);
        return p;
    }

    private static void check(String relative, int minLowered) {
        IRModule optimized = OptPipeline.optimize(OnnxImporter.importModel(model(relative), ImportOptions.DEFAULT), 3);
        Map<String, Function> byWorkload = new LinkedHashMap<>();
        Map<String, LoweredKernel> kernels = new LinkedHashMap<>();
        int lowered = 0, unsupported = 0, i = 0;
        for (Function g : groups(optimized)) {
            String name = "m_" + i++;
            try {
                LoweredKernel k = PrimitiveLowering.lower(g, name, Target.host(), Optional.empty());
                lowered++;
                String key = k.workload() + k.config().toJson();
                if (!byWorkload.containsKey(key) && byWorkload.size() < MAX_COMPILED) {
                    byWorkload.put(key, g);
                    kernels.put(key, k);
                }
            } catch (UnsupportedOperationException e) {
                unsupported++;
                assertTrue(e.getMessage().startsWith("group " + name + ": "), e.getMessage());
            }
        }
        assertTrue(lowered >= minLowered, relative + ": only " + lowered + " groups lowered (" + unsupported + " unsupported)");
        assertTrue(unsupported == 0 || minLowered < 0, relative + ": " + unsupported + " groups have operators without computes");
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found");
        try (KernelLibrary lib = KernelLibrary.build(new CModule(kernels.values().stream().map(LoweredKernel::func).toList()), CCompiler.host().orElseThrow())) {
            long seed = 7;
            for (Map.Entry<String, LoweredKernel> e : kernels.entrySet()) {
                GroupCheck.assertMatches(relative + " " + e.getKey(), byWorkload.get(e.getKey()), lib.kernel(e.getValue().func().name()), seed++);
            }
        }
    }

    @Test
    void squeezenetGroups() {
        // 26 convolution groups (25 NCHW16c/8c + the first plain one, bias + relu fused), pooling,
        // concatenate + layout_transform, softmax, reshape: every group lowers
        check("light/light_squeezenet.onnx", 40);
    }

    @Test
    void mnistGroups() {
        check("models/mnist8_cntk/model.onnx", 1);
    }
}
