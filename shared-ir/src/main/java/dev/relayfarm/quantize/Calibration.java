package dev.relayfarm.quantize;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Quantize step 2 (TVM's {@code calibrate}): gives every simulated-quantize point of {@code @main} its scale.
 *
 * <ul>
 *   <li>Weights (constants): {@code max|w| / qmax} per output channel along the point's axis, or per tensor.
 *   <li>Activations: the annotated program is instrumented to return the tensor at every point (the points
 *       themselves dropped, so it computes the float values), run on each calibration input with the reference
 *       interpreter, and the scale is {@code threshold / qmax} with the threshold from the samples' |x| (an unsigned
 *       point's positive x only: the rest quantize to 0 whatever the threshold):
 *       {@link Mode#MINMAX} the largest, {@link Mode#PERCENTILE} a percentile, {@link Mode#KL} TensorRT's
 *       KL-divergence choice over a 2048-bin histogram quantized to 128 levels; {@link Mode#GLOBAL_SCALE} gives
 *       every point {@code globalScale / qmax} without running anything.
 *   <li>Mixed precision ({@link QuantizeConfig#mixedPrecision()}): the activation points that alone disturb the
 *       output most on the calibration inputs ({@link Sensitivity}) get the wider bit width (their {@code nbit}
 *       attribute and scale change; realize gives them 16-bit tensors).
 * </ul>
 *
 * Histogram modes need each point's maximum before binning: the first run's tensors are kept for the second
 * pass while they fit in {@link #KEEP_BYTES}, else the inputs are run again. Not done: asymmetric ranges, calibrating
 * through the compiled artifact.
 */
public final class Calibration {
    public enum Mode { MINMAX, PERCENTILE, KL, GLOBAL_SCALE }

    public static final int HISTOGRAM_BINS = 2048;
    public static final int KL_LEVELS = 128;
    static final long KEEP_BYTES = 256L << 20;

    private Calibration() {}

    /** One calibrated point: its kind, bit width, the threshold (largest represented |x|) and the scale per channel or per tensor. */
    public record PointScale(String kind, int nbit, double[] thresholds, double[] scales) {}

    /** The calibrated module and each point's scales, in post-order of {@code @main}. */
    public record Result(IRModule module, List<PointScale> points) {}

    public static Result calibrate(IRModule annotated, List<List<NDArray>> inputs, QuantizeConfig config) {
        if (inputs.size() > config.calibSamples()) inputs = inputs.subList(0, config.calibSamples());
        Function main = annotated.main().orElseThrow(() -> new PassException("calibration needs a @main function"));
        List<Call> points = new ArrayList<>();
        for (Expr e : ExprTraversal.postOrder(main.body())) if (Annotate.isPoint(e)) points.add((Call) e);
        List<Call> activations = points.stream().filter(p -> !attrs(p).kind().equals("weight")).toList();
        Map<Call, double[]> thresholds = new IdentityHashMap<>();
        if (!activations.isEmpty()) {
            if (config.calibration() == Mode.GLOBAL_SCALE) {
                for (Call p : activations) thresholds.put(p, new double[] {config.globalScale()});
            } else {
                if (inputs.isEmpty()) throw new PassException("calibration mode " + config.calibration() + " needs at least one input");
                double[] t = activationThresholds(annotated, main, activations, inputs, config);
                for (int i = 0; i < activations.size(); i++) thresholds.put(activations.get(i), new double[] {t[i]});
            }
        }
        for (Call p : points) {
            if (!attrs(p).kind().equals("weight")) continue;
            if (!(p.args().get(0) instanceof Constant w)) throw new PassException("a weight point needs a constant weight (run fold-constant first): " + p);
            thresholds.put(p, maxAbs(w.data(), attrs(p).axis()));
        }
        // Mixed precision: the points that alone disturb the output most (ranked with their 8-bit scales) get more bits.
        Map<Call, Integer> widened = new IdentityHashMap<>();
        QuantizeConfig.MixedPrecision mixed = config.mixedPrecision();
        if (mixed.points() > 0 && !activations.isEmpty()) {
            if (inputs.isEmpty()) throw new PassException("mixed precision ranks the points on calibration inputs, and none were given (a global scale needs none: give inputs)");
            List<Call> ranked = Sensitivity.rank(annotated, main, activations, scales(points, thresholds, Map.of(), new ArrayList<>()), inputs);
            for (Call p : ranked.subList(0, Math.min(mixed.points(), ranked.size()))) widened.put(p, mixed.nbit());
        }
        List<PointScale> report = new ArrayList<>();
        Map<Call, Constant> scales = scales(points, thresholds, widened, report);
        IRModule out = withPoints(annotated, main, (pre, post) -> {
            if (!scales.containsKey(pre)) return post;
            Attrs a = widened.containsKey(pre) ? post.attrs().with("nbit", AttrValue.of((long) widened.get(pre))) : post.attrs();
            return new Call(post.callee(), List.of(post.args().get(0), scales.get(pre)), a, post.typeArgs(), post.span());
        });
        return new Result(TypeInference.infer(out).module(), report);
    }

    /** Each point's scale constant: its threshold over its largest level, at its own bit width or the widened one. */
    private static Map<Call, Constant> scales(List<Call> points, Map<Call, double[]> thresholds, Map<Call, Integer> widened, List<PointScale> report) {
        Map<Call, Constant> scales = new IdentityHashMap<>();
        for (Call p : points) {
            double[] t = thresholds.get(p);
            double[] s = new double[t.length];
            SimulatedQuantize.Attributes a = attrs(p);
            if (widened.containsKey(p)) a = new SimulatedQuantize.Attributes(a.kind(), widened.get(p), a.sign(), a.axis());
            double qmax = a.qmax();
            // an all-zero channel keeps a positive scale: its values quantize to 0 either way
            for (int i = 0; i < t.length; i++) s[i] = t[i] > 0 ? t[i] / qmax : 1.0 / qmax;
            report.add(new PointScale(a.kind(), a.nbit(), t, s));
            float[] f = new float[s.length];
            for (int i = 0; i < s.length; i++) f[i] = (float) s[i];
            scales.put(p, new Constant(s.length == 1 && a.axis() < 0 ? NDArray.scalar(f[0]) : NDArray.wrap(DType.FLOAT32, new int[] {f.length}, f)));
        }
        return scales;
    }

    /** {@code module} with {@code main}'s points replaced: {@code point} gets each original point and its rewritten form. */
    static IRModule withPoints(IRModule module, Function main, BiFunction<Call, Call, Call> point) {
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return Annotate.isPoint(pre) ? point.apply((Call) pre, (Call) post) : post;
            }
        }.rewrite(main.body());
        return module.withFunction("main", main.withBody(body));
    }

    static SimulatedQuantize.Attributes attrs(Call point) {
        return SimulatedQuantize.parse(point.attrs());
    }

    /** max |w| per index of {@code axis} (one value when {@code axis < 0}). */
    static double[] maxAbs(NDArray w, int axis) {
        int n = w.elementCount();
        if (axis < 0) {
            double m = 0;
            for (int i = 0; i < n; i++) m = Math.max(m, Math.abs(w.getDouble(i)));
            return new double[] {m};
        }
        int channels = w.shape()[axis], inner = 1;
        for (int d = axis + 1; d < w.rank(); d++) inner *= w.shape()[d];
        double[] m = new double[channels];
        for (int i = 0; i < n; i++) {
            int c = (i / inner) % channels;
            m[c] = Math.max(m[c], Math.abs(w.getDouble(i)));
        }
        return m;
    }

    /** {@code @main} returning the value at each point (the points dropped), as a tuple. */
    static IRModule instrumented(IRModule module, Function main, List<Call> points) {
        Map<Expr, Expr> rewritten = new IdentityHashMap<>();
        ExprRewriter drop = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                Expr out = Annotate.isPoint(pre) ? ((Call) post).args().get(0) : post;
                rewritten.put(pre, out);
                return out;
            }
        };
        drop.rewrite(main.body());
        List<Expr> fields = points.stream().map(p -> rewritten.get(p)).toList();
        Function profile = new Function(main.params(), new Tuple(fields, main.body().span()));
        return TypeInference.infer(module.withFunction("main", profile)).module();
    }

    private static double[] activationThresholds(IRModule module, Function main, List<Call> points, List<List<NDArray>> inputs, QuantizeConfig config) {
        IRModule profile = instrumented(module, main, points);
        Interpreter interp = new Interpreter(profile);
        int k = points.size();
        double[] max = new double[k];
        List<float[][]> kept = new ArrayList<>();
        long keptBytes = 0;
        boolean keep = config.calibration() != Mode.MINMAX;
        boolean[] unsigned = new boolean[k];
        for (int i = 0; i < k; i++) unsigned[i] = !attrs(points.get(i)).sign();
        for (List<NDArray> in : inputs) {
            float[][] values = run(interp, in, k, unsigned);
            for (int i = 0; i < k; i++) for (float v : values[i]) max[i] = Math.max(max[i], Math.abs(v));
            if (keep) {
                for (float[] v : values) keptBytes += 4L * v.length;
                if (keptBytes <= KEEP_BYTES) kept.add(values);
                else keep = false;
            }
        }
        if (config.calibration() == Mode.MINMAX) return max;
        Histogram[] hist = new Histogram[k];
        for (int i = 0; i < k; i++) hist[i] = max[i] > 0 ? new Histogram(max[i], HISTOGRAM_BINS) : null;
        if (kept.size() == inputs.size()) {
            for (float[][] values : kept) fill(hist, values);
        } else {
            kept.clear();
            for (List<NDArray> in : inputs) fill(hist, run(interp, in, k, unsigned));
        }
        double[] t = new double[k];
        for (int i = 0; i < k; i++) {
            if (hist[i] == null) continue;
            t[i] = pick(hist[i], config);
        }
        return t;
    }

    /** A histogram mode's threshold: the configured percentile of |x|, or KL's choice. */
    private static double pick(Histogram h, QuantizeConfig config) {
        return config.calibration() == Mode.PERCENTILE ? h.percentile(config.percentile()) : h.klThreshold(KL_LEVELS);
    }

    /**
     * The threshold (largest represented |x|) an activation point would get from these samples of its tensor, one
     * array per calibration input, by the config's mode: for a tensor that has no point in the module (the QDQ
     * exporter's output of a conv whose consumer reads floats), so its range is chosen by the same rule as the
     * points'. {@code unsigned}: only the positive values count, as for an unsigned point.
     */
    public static double threshold(List<float[]> samples, boolean unsigned, QuantizeConfig config) {
        if (config.calibration() == Mode.GLOBAL_SCALE) return config.globalScale();
        List<float[]> kept = samples;
        if (unsigned) {
            kept = new ArrayList<>();
            for (float[] s : samples) kept.add(positive(s));
        }
        double max = 0;
        for (float[] s : kept) for (float v : s) max = Math.max(max, Math.abs(v));
        if (config.calibration() == Mode.MINMAX || max == 0) return max;
        Histogram h = new Histogram(max, HISTOGRAM_BINS);
        for (float[] s : kept) h.addAbs(s);
        return pick(h, config);
    }

    private static float[] positive(float[] values) {
        int n = 0;
        for (float f : values) if (f > 0) n++;
        float[] pos = new float[n];
        n = 0;
        for (float f : values) if (f > 0) pos[n++] = f;
        return pos;
    }

    private static void fill(Histogram[] hist, float[][] values) {
        for (int i = 0; i < hist.length; i++) if (hist[i] != null) hist[i].addAbs(values[i]);
    }

    /** The values at each point for one input; an unsigned point's positive values only. */
    private static float[][] run(Interpreter interp, List<NDArray> in, int k, boolean[] unsigned) {
        Value v = interp.call("main", in.toArray(new NDArray[0]));
        List<Value> fields = ((TupleValue) v).fields();
        float[][] out = new float[k][];
        for (int i = 0; i < k; i++) {
            NDArray a = ((TensorValue) fields.get(i)).data();
            if (a.dtype().equals(DType.FLOAT32)) {
                out[i] = a.floatData();
            } else {
                out[i] = new float[a.elementCount()];
                for (int j = 0; j < out[i].length; j++) out[i][j] = (float) a.getDouble(j);
            }
            if (unsigned[i]) {
                // Zero and negative values land on level 0 whatever the threshold: only the positive ones say
                // anything about it (counting them would pile the histogram's mass into bin 0 and pull KL down).
                out[i] = positive(out[i]);
            }
        }
        return out;
    }
}
