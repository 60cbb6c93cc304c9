package dev.relayfarm.train;

import dev.relayfarm.ad.GradientPipeline;
import dev.relayfarm.ad.ReverseMode;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Training a model written as a loss: {@code @main(data..., params...) -> scalar loss}. The data parameters (named by
 * the caller) take consecutive batches of a dataset (rows of arrays whose first dimension is the sample axis, the
 * parameter's first dimension being the batch), reshuffled each epoch with the seed; every other parameter is trained:
 * its gradient comes from the reverse-mode gradient program, its update from an {@link Optimizer}.
 */
public final class Training {
    /** The model, its gradient program (with respect to the trained parameters), and which parameter is which. */
    public record Plan(IRModule model, IRModule gradient, List<Var> params, List<Var> data, List<Var> trained) {}

    /** Called after each step with its number (from 1) and loss. */
    @FunctionalInterface
    public interface StepListener {
        void step(int step, double loss);
    }

    private Training() {}

    public static Plan plan(IRModule model, Set<String> dataParams) {
        IRModule typed = TypeInference.infer(model).module();
        Function main = typed.main().orElseThrow(() -> new IllegalArgumentException("the model has no @main"));
        if (!(main.retType() instanceof TensorType r) || r.rank() != 0 || !r.dtype().isFloat()) {
            throw new IllegalArgumentException("@main must return a scalar floating-point loss, it returns " + main.retType());
        }
        List<Var> data = new ArrayList<>(), trained = new ArrayList<>();
        for (Var p : main.params()) (dataParams.contains(p.name()) ? data : trained).add(p);
        for (String d : dataParams) {
            if (main.params().stream().noneMatch(p -> p.name().equals(d))) throw new IllegalArgumentException("@main has no parameter %" + d + " (data)");
        }
        if (trained.isEmpty()) throw new IllegalArgumentException("every parameter of @main is data: nothing to train");
        for (Var p : main.params()) {
            if (!(p.annotation() instanceof TensorType t) || !t.isStatic()) {
                throw new IllegalArgumentException("parameter %" + p.name() + " is " + p.annotation() + "; training needs statically shaped tensors");
            }
        }
        for (Var d : data) {
            TensorType t = (TensorType) d.annotation(), first = (TensorType) data.getFirst().annotation();
            if (t.rank() == 0 || !t.shape().getFirst().equals(first.shape().getFirst())) {
                throw new IllegalArgumentException("data parameters must share their first (batch) dimension: %" + data.getFirst().name() + " is "
                        + first + ", %" + d.name() + " is " + t);
            }
        }
        IRModule gradient = ReverseMode.gradient(typed, "main", trained.stream().map(Var::name).toList());
        return new Plan(typed, gradient, main.params(), data, trained);
    }

    /** The gradient program partially evaluated, optimized at -O3 and compiled into {@code dir}, loaded. */
    public static CompiledModel compile(Plan plan, Path dir, int threads) {
        IRModule optimized = OptPipeline.optimize(GradientPipeline.simplify(plan.gradient()), 3);
        ArtifactCompiler.compile(optimized, CompileOptions.host(3), dir);
        CompiledModel model = CompiledModel.load(dir);
        model.setNumThreads(threads);
        return model;
    }

    /**
     * Seeded initial values of the trained parameters: Glorot-uniform for weights (rank >= 2; fan-in is the product of
     * all but the first dimension, fan-out the first times the trailing ones, as for dense and OIHW convolution
     * weights), ones for a vector the model uses as a normalization's scale or variance (a zero gamma would stop every
     * gradient through it, a zero variance divides by epsilon), zeros for biases and other vectors.
     */
    public static Map<String, NDArray> initialParams(Plan plan, long seed) {
        Map<String, NDArray> out = new LinkedHashMap<>();
        SplittableRandom random = new SplittableRandom(seed);
        java.util.Set<Var> ones = scalesAndVariances(plan.model());
        for (Var p : plan.trained()) {
            TensorType t = (TensorType) p.annotation();
            int[] shape = t.staticShape();
            NDArray a = NDArray.zeros(t.dtype(), shape);
            if (ones.contains(p)) {
                for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, 1);
            } else if (shape.length >= 2) {
                long receptive = 1;
                for (int i = 2; i < shape.length; i++) receptive *= shape[i];
                double fanIn = (double) shape[1] * receptive, fanOut = (double) shape[0] * receptive;
                double limit = Math.sqrt(6 / (fanIn + fanOut));
                for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, random.nextDouble(-limit, limit));
            }
            out.put(p.name(), a);
        }
        return out;
    }

    /** Parameters passed straight to nn.batch_norm as gamma or moving variance, or to nn.layer_norm as gamma. */
    private static java.util.Set<Var> scalesAndVariances(IRModule model) {
        java.util.Set<Var> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (dev.relayfarm.ir.Expr e : dev.relayfarm.ir.ExprTraversal.postOrder(model.main().orElseThrow().body())) {
            if (e instanceof dev.relayfarm.ir.Call c && c.callee() instanceof dev.relayfarm.ir.Op op) {
                List<Integer> slots = switch (op.name()) {
                    case "nn.batch_norm" -> List.of(1, 4);
                    case "nn.layer_norm" -> List.of(1);
                    default -> List.of();
                };
                for (int i : slots) if (i < c.args().size() && c.args().get(i) instanceof Var v) out.add(v);
            }
        }
        return out;
    }

    /**
     * Runs {@code steps} optimizer steps from {@code params} (updated in place, by trained parameter name) and returns
     * the loss of each step.
     */
    public static double[] train(Plan plan, GradientStep step, Map<String, NDArray> dataset, Map<String, NDArray> params, Optimizer optimizer,
            int steps, long seed, StepListener listener) {
        int samples = checkDataset(plan, dataset);
        int batch = ((TensorType) plan.data().getFirst().annotation()).staticShape()[0];
        int batchesPerEpoch = samples / batch;
        double[] losses = new double[steps];
        int[] order = null;
        List<NDArray> trained = plan.trained().stream().map(p -> params.get(p.name())).toList();
        for (int s = 0; s < steps; s++) {
            int epoch = s / batchesPerEpoch, k = s % batchesPerEpoch;
            if (k == 0) order = permutation(samples, new SplittableRandom(seed + epoch));
            int[] rows = Arrays.copyOfRange(order, k * batch, (k + 1) * batch);
            List<NDArray> inputs = new ArrayList<>();
            for (Var p : plan.params()) inputs.add(dataset.containsKey(p.name()) ? rows(dataset.get(p.name()), rows) : params.get(p.name()));
            GradientStep.Result r = step.run(inputs);
            losses[s] = r.loss();
            optimizer.apply(trained, r.grads());
            if (listener != null) listener.step(s + 1, r.loss());
        }
        return losses;
    }

    private static int checkDataset(Plan plan, Map<String, NDArray> dataset) {
        if (plan.data().isEmpty()) throw new IllegalArgumentException("no data parameters");
        int samples = -1;
        for (Var p : plan.data()) {
            NDArray a = dataset.get(p.name());
            if (a == null) throw new IllegalArgumentException("no data for %" + p.name());
            int[] want = ((TensorType) p.annotation()).staticShape();
            int[] got = a.shape();
            if (got.length != want.length || !Arrays.equals(Arrays.copyOfRange(got, 1, got.length), Arrays.copyOfRange(want, 1, want.length))
                    || !a.dtype().equals(((TensorType) p.annotation()).dtype())) {
                throw new IllegalArgumentException("data for %" + p.name() + " is " + a.dtype() + Arrays.toString(got) + "; want " + ((TensorType) p.annotation()).dtype()
                        + " (N, " + Arrays.toString(Arrays.copyOfRange(want, 1, want.length)).replaceAll("[\\[\\]]", "") + ") with N >= " + want[0]);
            }
            if (samples >= 0 && got[0] != samples) throw new IllegalArgumentException("data arrays disagree on the number of samples: " + samples + " vs " + got[0] + " (%" + p.name() + ")");
            samples = got[0];
            if (samples < want[0]) throw new IllegalArgumentException("%" + p.name() + " has " + samples + " samples, fewer than one batch of " + want[0]);
        }
        return samples;
    }

    private static int[] permutation(int n, SplittableRandom random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }

    private static NDArray rows(NDArray a, int[] rows) {
        int[] shape = a.shape().clone();
        int row = a.elementCount() / shape[0];
        shape[0] = rows.length;
        NDArray out = NDArray.zeros(a.dtype(), shape);
        for (int r = 0; r < rows.length; r++) {
            for (int i = 0; i < row; i++) out.setDouble(r * row + i, a.getDouble(rows[r] * row + i));
        }
        return out;
    }

}
