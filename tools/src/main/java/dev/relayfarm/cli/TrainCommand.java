package dev.relayfarm.cli;

import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.train.GradientStep;
import dev.relayfarm.train.Optimizer;
import dev.relayfarm.train.SyntheticData;
import dev.relayfarm.train.Training;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc train FILE (--data NAME=FILE.npy ... | --synthetic N) [--steps N] [--optimizer adam] [--lr R] [--backend c]}:
 * trains a model written as its loss ({@code @main(data..., params...) -> scalar}) with {@link Training}: the data
 * parameters take seeded batches of the dataset, the others are trained through the reverse-mode gradient program,
 * compiled natively ({@code --backend c}, the default) or run by the interpreter ({@code --backend interp}). Prints the loss
 * every {@code --print-every} steps; {@code --out DIR} receives the trained parameters as NAME.npy and losses.txt.
 */
@Command(name = "train", mixinStandardHelpOptions = true,
        description = {"Train a model written as its loss: @main(data..., params...) -> scalar loss. Data parameters take batches",
                "(rows of the --data arrays, or a seeded --synthetic classification set); the others are trained by gradient descent."})
public final class TrainCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file")
    String file;

    @Option(names = "--data", paramLabel = "NAME=FILE.npy", description = "a data parameter and its samples (first dimension = samples; repeatable)")
    List<String> data = new ArrayList<>();

    @Option(names = "--synthetic", paramLabel = "N", description = "instead of --data: N seeded samples of a classification set for the data parameters named by --inputs")
    Integer synthetic;

    @Option(names = "--inputs", split = ",", paramLabel = "X,Y", description = "with --synthetic: the samples and one-hot labels parameters (default: the first two of @main)")
    List<String> inputs = new ArrayList<>();

    @Option(names = "--init", paramLabel = "NAME=FILE.npy", description = "a trained parameter's initial value (default: seeded Glorot-uniform weights, zero vectors)")
    List<String> init = new ArrayList<>();

    @Option(names = "--steps", defaultValue = "100", description = "optimizer steps (default ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--optimizer", defaultValue = "adam", description = "sgd, momentum or adam (default ${DEFAULT-VALUE})")
    String optimizer;

    @Option(names = "--lr", defaultValue = "0.01", description = "learning rate (default ${DEFAULT-VALUE})")
    double lr;

    @Option(names = "--backend", defaultValue = "c", description = "c (the gradient program compiled at -O3) or interp (the reference interpreter; default ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--threads", defaultValue = "1", description = "threads of the compiled program (default ${DEFAULT-VALUE}; 0 = all)")
    int threads;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the initial values, the batch order and --synthetic data (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--print-every", defaultValue = "10", description = "print the loss every N steps (default ${DEFAULT-VALUE})")
    int printEvery;

    @Option(names = "--out", paramLabel = "DIR", description = "write the trained parameters (NAME.npy) and every step's loss (losses.txt) here")
    Path out;

    @Override
    public Integer call() throws IOException {
        PrintWriter o = spec.commandLine().getOut();
        if (steps < 1) return CliErrors.report(spec, "--steps must be at least 1, got " + steps);
        if (printEvery < 1) return CliErrors.report(spec, "--print-every must be at least 1, got " + printEvery);
        if (!backend.equals("c") && !backend.equals("interp")) return CliErrors.report(spec, "--backend must be c or interp, got '" + backend + "'");
        if ((synthetic == null) == data.isEmpty()) return CliErrors.report(spec, "give the data either with --data NAME=FILE.npy or with --synthetic N");
        Optimizer opt;
        try {
            opt = Optimizer.named(optimizer, lr);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        ModelSource source = ModelFiles.read(file);
        IRModule model = Stages.importModel(source, Map.of());
        Map<String, NDArray> dataset = new LinkedHashMap<>();
        Training.Plan plan;
        try {
            if (synthetic != null) {
                List<Var> params = dev.relayfarm.types.TypeInference.infer(model).module().main()
                        .orElseThrow(() -> new IllegalArgumentException("the model has no @main")).params();
                List<String> xy = inputs.isEmpty() && params.size() >= 2 ? List.of(params.get(0).name(), params.get(1).name()) : inputs;
                if (xy.size() != 2) return CliErrors.report(spec, "--inputs names the samples and the labels parameters, e.g. --inputs x,y");
                plan = Training.plan(model, new LinkedHashSet<>(xy));
                dataset.putAll(SyntheticData.classification(xy.get(0), type(plan, xy.get(0)), xy.get(1), type(plan, xy.get(1)), synthetic, seed));
            } else {
                for (Map.Entry<String, Path> e : ModelFiles.namedFiles("--data", data).entrySet()) dataset.put(e.getKey(), Npy.read(e.getValue()));
                plan = Training.plan(model, dataset.keySet());
            }
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, source.name() + ": " + e.getMessage());
        }
        Map<String, NDArray> params = Training.initialParams(plan, seed);
        for (Map.Entry<String, Path> e : ModelFiles.namedFiles("--init", init).entrySet()) {
            if (!params.containsKey(e.getKey())) return CliErrors.report(spec, "--init " + e.getKey() + ": not a trained parameter of @main (trained: " + params.keySet() + ")");
            NDArray v = Npy.read(e.getValue());
            NDArray want = params.get(e.getKey());
            if (!java.util.Arrays.equals(v.shape(), want.shape()) || !v.dtype().equals(want.dtype())) {
                return CliErrors.report(spec, "--init " + e.getKey() + "=" + e.getValue() + " is " + v.dtype() + java.util.Arrays.toString(v.shape())
                        + ", the parameter is " + want.dtype() + java.util.Arrays.toString(want.shape()));
            }
            params.put(e.getKey(), v);
        }
        o.printf("training %s: %d parameters (%s), %s lr %s, %d steps, backend %s%n", source.name(), plan.trained().size(),
                String.join(", ", params.keySet()), optimizer, lr, steps, backend);
        o.flush();
        double[] losses;
        Path work = backend.equals("c") ? Files.createTempDirectory("relayc-train") : null;
        try (GradientStep step = work != null ? GradientStep.compiled(Training.compile(plan, work.resolve("gradient"), threads))
                : GradientStep.interpreted(plan.gradient())) {
            try {
                losses = Training.train(plan, step, dataset, params, opt, steps, seed, (k, loss) -> {
                    if (k % printEvery == 0 || k == 1 || k == steps) {
                        o.printf("step %d loss %.6f%n", k, loss);
                        o.flush();
                    }
                });
            } catch (IllegalArgumentException e) {
                return CliErrors.report(spec, e.getMessage());
            }
        } finally {
            if (work != null) deleteTree(work);
        }
        if (out != null) {
            Files.createDirectories(out);
            for (Map.Entry<String, NDArray> e : params.entrySet()) Npy.write(out.resolve(e.getKey() + ".npy"), e.getValue());
            StringBuilder sb = new StringBuilder();
            for (double l : losses) sb.append(l).append('\n');
            Files.writeString(out.resolve("losses.txt"), sb);
            o.println("wrote " + params.size() + " parameters and losses.txt to " + out);
        }
        o.flush();
        return 0;
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private static TensorType type(Training.Plan plan, String name) {
        return (TensorType) plan.params().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow().annotation();
    }
}
