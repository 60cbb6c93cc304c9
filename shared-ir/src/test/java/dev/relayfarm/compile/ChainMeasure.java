package dev.relayfarm.compile;

import dev.relayfarm.gen.RandomModules;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ChainMeasure {
    @Test
    void measure() throws Exception {
        for (String s : System.getProperty("chain.sizes", "1000").split(",")) {
            int n = Integer.parseInt(s);
            for (String kind : new String[] {"let", "dataflow"}) {
                long t0 = System.nanoTime();
                IRModule m = kind.equals("let") ? RandomModules.letChain(n) : RandomModules.dataflowChain(n);
                IRModule opt = Stages.optimize(Stages.inferTypes(m), 3);
                long t1 = System.nanoTime();
                Path dir = Files.createTempDirectory("chain");
                ArtifactCompiler.Artifact a = ArtifactCompiler.compile(opt, CompileOptions.host(3), dir);
                long t2 = System.nanoTime();
                System.out.printf("MEASURE %s n=%d opt=%.1fs codegen=%.1fs kernels=%d steps=%d kernels.c=%d entry.c=%d%n", kind, n, (t1 - t0) / 1e9, (t2 - t1) / 1e9,
                        a.graph().kernels().size(), a.graph().steps().size(), Files.size(dir.resolve("src/kernels.c")), Files.size(dir.resolve("src/entry.c")));
            }
        }
    }
}
