package dev.relayfarm.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * Where a compiled model's time goes, kernel by kernel, as the executor itself measures it
 * ({@link CompiledModel#profile}, {@code relayfarm_profile}): every kernel call and copy of a whole run is timed
 * with the monotonic clock, so a kernel's time is taken in place (its inputs as the previous kernel left them in
 * cache), unlike {@link GradientBench#kernelTimes}, which compiles and times each kernel alone.
 *
 * <p>Per kernel: its fused Relay ops, template and workload key, calls per run, the median over the runs of its
 * seconds per run (all its calls summed), its share of the kernels' medians summed, and, for a kernel whose
 * primitive holds a convolution or a matrix product, its GFLOP/s ({@link #flops}) and that as a percentage of a
 * peak; and for every kernel the bytes it moves at least ({@link #bytes}) per second, and that as a percentage of the
 * machine's memory bandwidth. Not a latency benchmark: reading the clock around each step costs a little; {@code relayc bench} times
 * plain runs.
 */
public final class KernelProfiler {

    private KernelProfiler() {}

    /**
     * How to profile.
     *
     * @param peakGflops the machine's peak GFLOP/s for the threads used; NaN for unknown (no % column)
     * @param peakGbps   the machine's memory bandwidth in GB/s for the threads used; NaN for unknown (no %bw column)
     */
    public record Options(int threads, int warmup, int runs, double peakGflops, double peakGbps) {
        public Options {
            if (threads < 1 || runs < 1 || warmup < 0) {
                throw new IllegalArgumentException("threads and runs must be at least 1 and warm-up at least 0, got " + threads + ", " + runs + ", " + warmup);
            }
        }
    }

    /**
     * One kernel's line.
     *
     * @param flops     floating-point operations per run of its anchors (all calls); -1 when it has no convolution or matrix product
     * @param medianMs  median over the runs of its milliseconds per run, all its calls summed
     * @param share     {@code medianMs} over the kernels' medians summed (0..1)
     * @param bytes     bytes its calls read and write per run, counted once per argument and result ({@link #bytes}): the
     *                  least any kernel computing it must move
     */
    public record Row(String kernel, String ops, String template, String workload, int calls, double medianMs, double share, long flops, long bytes) {
        /** GFLOP/s at the median time; NaN without FLOPs or time. */
        public double gflops() {
            return flops < 0 || medianMs <= 0 ? Double.NaN : flops / (medianMs * 1e6);
        }

        /** GB/s of {@link #bytes} at the median time; NaN without bytes or time. */
        public double gbps() {
            return bytes < 0 || medianMs <= 0 ? Double.NaN : bytes / (medianMs * 1e6);
        }
    }

    /**
     * A profile: rows sorted by time (largest first), and the medians of the run's parts.
     *
     * @param kernelsMs  the rows' medians summed (what the shares are of)
     * @param copiesMs   median over the runs of the executor's copies
     * @param wallMs     median over the runs of the whole native call
     */
    public record Profile(String model, Options options, List<Row> rows, double kernelsMs, double copiesMs, double wallMs) {
        public Profile {
            rows = List.copyOf(rows);
        }

        /** The table: the {@code top} slowest kernels (all when {@code top <= 0}), then the totals. */
        public void printTable(PrintWriter out, int top) {
            List<Row> shown = top > 0 && top < rows.size() ? rows.subList(0, top) : rows;
            int nameWidth = 6, templateWidth = 8, opsWidth = 3;
            for (Row r : shown) {
                nameWidth = Math.max(nameWidth, r.kernel().length());
                templateWidth = Math.max(templateWidth, r.template().length());
                opsWidth = Math.max(opsWidth, r.ops().length());
            }
            String texts = "  %-" + templateWidth + "s  %-" + opsWidth + "s  %s%n";
            out.printf("%-" + nameWidth + "s %5s %10s %7s %9s %6s %7s %5s" + texts, "kernel", "calls", "median ms", "share", "GFLOP/s", "%peak", "GB/s",
                    "%bw", "template", "ops", "workload");
            for (Row r : shown) {
                double g = r.gflops(), b = r.gbps();
                String gf = Double.isNaN(g) ? "" : String.format(Locale.ROOT, "%.1f", g);
                String pk = Double.isNaN(g) || Double.isNaN(options.peakGflops()) ? "" : String.format(Locale.ROOT, "%.1f", 100 * g / options.peakGflops());
                String gb = Double.isNaN(b) ? "" : String.format(Locale.ROOT, "%.1f", b);
                String bw = Double.isNaN(b) || Double.isNaN(options.peakGbps()) ? "" : String.format(Locale.ROOT, "%.0f", 100 * b / options.peakGbps());
                out.printf(Locale.ROOT, "%-" + nameWidth + "s %5d %10.4f %6.2f%% %9s %6s %7s %5s" + texts, r.kernel(), r.calls(), r.medianMs(),
                        100 * r.share(), gf, pk, gb, bw, r.template(), r.ops(), r.workload());
            }
            if (shown.size() < rows.size()) {
                double rest = 0;
                for (Row r : rows.subList(shown.size(), rows.size())) rest += r.medianMs();
                out.printf(Locale.ROOT, "(%d more kernels: %.4f ms, %.2f%%)%n", rows.size() - shown.size(), rest, kernelsMs > 0 ? 100 * rest / kernelsMs : 0);
            }
            out.printf(Locale.ROOT, "total: kernels %.4f ms (%d kernels, medians summed), copies %.4f ms, wall %.4f ms (median of the call)%n",
                    kernelsMs, rows.size(), copiesMs, wallMs);
            out.printf(Locale.ROOT, "%s: %d thread(s), median of %d profiled runs after %d warm-up; peak %s, memory bandwidth %s%n", model,
                    options.threads(), options.runs(), options.warmup(), Double.isNaN(options.peakGflops()) ? "unknown (give --peak-gflops)"
                            : String.format(Locale.ROOT, "%.1f GFLOP/s", options.peakGflops()),
                    Double.isNaN(options.peakGbps()) ? "unknown (give --peak-gbps)" : String.format(Locale.ROOT, "%.1f GB/s", options.peakGbps()));
        }

        /**
         * An estimate of the most this profile's kernels could speed up on {@code threads} threads whose memory system
         * reads at most {@code readGbps} GB/s: each kernel takes at least its time divided by the threads (perfect
         * scaling) and, when its bytes ({@link #bytes}) cannot stay in a last-level cache of {@code cacheBytes}, at
         * least those bytes over the bandwidth; the estimate is the kernels' total over the sum of those floors. A model
         * whose time is weight traffic (a dense layer at batch 1 reads every weight once from memory) cannot scale past
         * the machine's bandwidth scaling whatever its kernels do, and this says how far a given model can. It is an
         * estimate, not a proof: a kernel can scale past 2x when two cores' private caches hold what one's could not.
         */
        public double scalingBound(int threads, double readGbps, long cacheBytes) {
            if (threads < 1) throw new IllegalArgumentException("threads must be at least 1, got " + threads);
            if (!(readGbps > 0)) throw new IllegalArgumentException("bandwidth must be positive, got " + readGbps);
            double floor = 0;
            for (Row r : rows) floor += Math.max(r.medianMs() / threads, r.bytes() <= cacheBytes ? 0 : r.bytes() / (readGbps * 1e6));
            return floor > 0 ? kernelsMs / floor : Double.NaN;
        }

        /** One JSON object: the settings, every row (FLOPs and GFLOP/s null where there are none) and the totals. */
        public String toJson() {
            ObjectMapper json = new ObjectMapper();
            ObjectNode o = json.createObjectNode();
            o.put("model", model);
            o.put("threads", options.threads());
            o.put("warmup", options.warmup());
            o.put("runs", options.runs());
            putNumber(o, "peak_gflops", options.peakGflops());
            putNumber(o, "peak_gbps", options.peakGbps());
            ArrayNode arr = o.putArray("kernels");
            for (Row r : rows) {
                ObjectNode k = arr.addObject();
                k.put("name", r.kernel());
                k.put("ops", r.ops());
                k.put("template", r.template());
                k.put("workload", r.workload());
                k.put("calls", r.calls());
                k.put("median_ms", r.medianMs());
                k.put("share", r.share());
                if (r.flops() >= 0) k.put("flops", r.flops());
                else k.putNull("flops");
                putNumber(k, "gflops", r.gflops());
                putNumber(k, "peak_fraction", r.gflops() / options.peakGflops());
                k.put("bytes", r.bytes());
                putNumber(k, "gbps", r.gbps());
                putNumber(k, "bandwidth_fraction", r.gbps() / options.peakGbps());
            }
            o.put("kernels_ms", kernelsMs);
            o.put("copies_ms", copiesMs);
            o.put("wall_ms", wallMs);
            return o.toString();
        }

        private static void putNumber(ObjectNode o, String key, double v) {
            if (Double.isFinite(v)) o.put(key, v);
            else o.putNull(key);
        }
    }

    /**
     * Profiles {@code model}, compiled into {@code artifact} and loaded as {@code compiled} (its thread count set here):
     * {@code warmup} untimed profiled runs, then {@code runs} profiled ones on {@code inputs}.
     */
    public static Profile profile(String model, ArtifactCompiler.Artifact artifact, CompiledModel compiled, List<NDArray> inputs, Options options) {
        Manifest manifest = Manifest.read(artifact.dir());
        List<GraphPlan.Kernel> kernels = artifact.graph().kernels();
        if (manifest.kernels().size() != kernels.size()) {
            throw new IllegalStateException(artifact.dir() + ": the manifest lists " + manifest.kernels().size() + " kernels, the plan " + kernels.size());
        }
        compiled.setNumThreads(options.threads());
        for (int w = 0; w < options.warmup(); w++) compiled.profile(inputs);
        double[][] perKernel = new double[kernels.size()][options.runs()];
        double[] copies = new double[options.runs()], wall = new double[options.runs()];
        for (int r = 0; r < options.runs(); r++) {
            CompiledModel.KernelProfile p = compiled.profile(inputs);
            for (int k = 0; k < kernels.size(); k++) perKernel[k][r] = p.kernelSeconds().getOrDefault(manifest.kernels().get(k).name(), 0.0) * 1e3;
            copies[r] = p.copySeconds() * 1e3;
            wall[r] = p.totalSeconds() * 1e3;
        }
        double[] median = new double[kernels.size()];
        double sum = 0;
        for (int k = 0; k < median.length; k++) sum += median[k] = SideBySide.percentile(perKernel[k], 0.5);
        List<Row> rows = new ArrayList<>();
        for (int k = 0; k < kernels.size(); k++) {
            Manifest.Kernel mk = manifest.kernels().get(k);
            Function prim = kernels.get(k).primitive();
            InferResult typed = typed(prim);
            OptionalLong perCall = flops(typed);
            long perCallBytes = bytes(typed);
            // the template the artifact was built with, as its manifest records it
            String template = mk.config() == null ? "" : mk.config().path("template").asText("");
            rows.add(new Row(mk.name(), ops(prim), template, mk.workload(), mk.calls(), median[k], sum > 0 ? median[k] / sum : 0,
                    perCall.isPresent() ? perCall.getAsLong() * mk.calls() : -1, perCallBytes < 0 ? -1 : perCallBytes * mk.calls()));
        }
        rows.sort(Comparator.comparingDouble(Row::medianMs).reversed().thenComparing(Row::kernel));
        return new Profile(model, options, rows, sum, SideBySide.percentile(copies, 0.5), SideBySide.percentile(wall, 0.5));
    }

    /** The operators a fused kernel calls, in order, joined by '+'. */
    public static String ops(Function prim) {
        List<String> ops = new ArrayList<>();
        for (Expr e : ExprTraversal.postOrder(prim.body())) {
            if (e instanceof Call c && c.callee() instanceof Op op) ops.add(op.name());
        }
        return String.join("+", ops);
    }

    /**
     * Floating-point operations of one call of a fused primitive, counted on its anchors only, 2 per multiply-accumulate,
     * from the typed shapes of the calls: {@code nn.conv2d} and {@code nn.contrib_conv2d_NCHWc} (output elements × weight
     * elements per output channel, which already divides the input channels by the groups), {@code nn.contrib_conv2d_winograd_NCHWc}
     * (the direct convolution's count, so its rate is the effective one and may pass the peak), {@code nn.dense},
     * {@code nn.matmul} and {@code nn.batch_matmul} (output elements × the reduced dimension). The elementwise ops fused
     * after them are not counted. Empty when the primitive has none of these or a shape is not static.
     */
    public static OptionalLong flops(Function prim) {
        return flops(typed(prim));
    }

    /** A fused primitive type-checked on its own, as {@link #flops(InferResult)} and {@link #bytes(InferResult)} read it. */
    private static InferResult typed(Function prim) {
        return TypeInference.inferExpr(prim, OpResolver.REGISTRY);
    }

    private static OptionalLong flops(InferResult types) {
        Function fn = types.module().main().orElseThrow();
        long total = 0;
        boolean any = false;
        for (Expr e : ExprTraversal.postOrder(fn.body())) {
            if (!(e instanceof Call c && c.callee() instanceof Op op)) continue;
            OptionalLong macs = macs(op.name(), c, types);
            if (macs.isEmpty()) continue;
            total += 2 * macs.getAsLong();
            any = true;
        }
        return any ? OptionalLong.of(total) : OptionalLong.empty();
    }

    /**
     * Bytes one call of a fused primitive reads and writes, each parameter and the result counted once (a tuple result
     * by its fields): what it must move at least, so its time over this is a lower bound on the bandwidth it reached.
     * -1 when a type is not a static tensor.
     */
    public static long bytes(Function prim) {
        return bytes(typed(prim));
    }

    private static long bytes(InferResult inferred) {
        Function fn = inferred.module().main().orElseThrow();
        long total = 0;
        List<Type> types = new ArrayList<>();
        for (dev.relayfarm.ir.Var p : fn.params()) types.add(inferred.typeOf(p));
        types.add(inferred.typeOf(fn.body()));
        for (int i = 0; i < types.size(); i++) {
            switch (types.get(i)) {
                case TensorType t when t.isStatic() -> total += product(shape(t)) * t.dtype().storageBytes() * t.dtype().lanes();
                case dev.relayfarm.ir.TupleType tt -> types.addAll(tt.fields());
                case null, default -> {
                    return -1;
                }
            }
        }
        return total;
    }

    private static OptionalLong macs(String op, Call c, InferResult types) {
        return switch (op) {
            case "nn.conv2d", "nn.contrib_conv2d_NCHWc" -> {
                long[] out = shape(types.typeOf(c)), w = shape(types.typeOf(c.args().get(1)));
                if (out == null || w == null) yield OptionalLong.empty();
                String layout = string(c, "kernel_layout", op.equals("nn.conv2d") ? "OIHW" : "OIHW8i8o");
                long outChannels = 1;
                int axis = 0;
                for (char ch : layout.toCharArray()) {
                    if (Character.isDigit(ch)) continue;
                    if (axis >= w.length) yield OptionalLong.empty();
                    if (ch == 'O' || ch == 'o') outChannels *= w[axis];
                    axis++;
                }
                if (axis != w.length || outChannels == 0) yield OptionalLong.empty();
                yield OptionalLong.of(product(out) * (product(w) / outChannels));
            }
            case "nn.contrib_conv2d_winograd_NCHWc" -> {
                // the direct convolution's count (out x input channels x 3 x 3): the effective rate, comparable with the direct kernels'
                long[] out = shape(types.typeOf(c)), u = shape(types.typeOf(c.args().get(1)));
                yield out == null || u == null || u.length != 6 ? OptionalLong.empty() : OptionalLong.of(product(out) * u[3] * u[4] * 9);
            }
            case "nn.dense" -> {
                long[] out = shape(types.typeOf(c)), x = shape(types.typeOf(c.args().get(0)));
                yield out == null || x == null || x.length == 0 ? OptionalLong.empty() : OptionalLong.of(product(out) * x[x.length - 1]);
            }
            case "nn.matmul" -> {
                long[] out = shape(types.typeOf(c)), x = shape(types.typeOf(c.args().get(0)));
                if (out == null || x == null || x.length == 0) yield OptionalLong.empty();
                yield OptionalLong.of(product(out) * (bool(c, "transpose_a", false) ? x[0] : x[x.length - 1]));
            }
            case "nn.batch_matmul" -> {
                long[] out = shape(types.typeOf(c)), x = shape(types.typeOf(c.args().get(0)));
                if (out == null || x == null || x.length != 3) yield OptionalLong.empty();
                yield OptionalLong.of(product(out) * (bool(c, "transpose_a", false) ? x[1] : x[2]));
            }
            default -> OptionalLong.empty();
        };
    }

    private static long[] shape(Type t) {
        if (!(t instanceof TensorType tt) || !tt.isStatic()) return null;
        int[] s = tt.staticShape();
        long[] l = new long[s.length];
        for (int i = 0; i < s.length; i++) l[i] = s[i];
        return l;
    }

    private static long product(long[] dims) {
        long p = 1;
        for (long d : dims) p *= d;
        return p;
    }

    private static String string(Call c, String key, String dflt) {
        return c.attrs().get(key).map(v -> v instanceof AttrValue.StringValue s && !s.value().isEmpty() ? s.value() : dflt).orElse(dflt);
    }

    private static boolean bool(Call c, String key, boolean dflt) {
        return c.attrs().get(key).map(v -> switch (v) {
            case AttrValue.BoolValue b -> b.value();
            case AttrValue.IntValue i -> i.value() != 0;
            default -> dflt;
        }).orElse(dflt);
    }
}
