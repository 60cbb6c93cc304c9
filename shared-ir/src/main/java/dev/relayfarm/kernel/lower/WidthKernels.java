package dev.relayfarm.kernel.lower;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.Knob;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.text.RelayPrinter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Kernels for fused groups whose dynamic dimensions are not (only) a leading batch: an image width through
 * convolutions and pooling, a sequence length through attention. Compiled once, a kernel runs for every size. The second
 * slice of issue 19's symbolic-shape kernels, after {@link RowKernels}.
 *
 * <p>The group's dynamic input dimensions are all one run-time <em>size</em> {@code s} (the VM checks it). The ordinary
 * templates ({@link PrimitiveLowering}) lower the group with {@code s} pinned to samples of one residue class,
 * {@code s = PERIOD·t + r} for a window of {@code t}s (start, start + 1, start + 2 to fit, start + 4 and start + 7 to
 * check; the start 1, 2 or 4), and {@link SampleUnifier} merges the nests: the same form, every integer a quadratic in
 * {@code t}. One such variant per residue {@code r}; the kernel dispatches on {@code s mod PERIOD}. Within a class every
 * floor division of the size by a divisor of {@value #PERIOD} (strides of 2, 4, 8; pools of 2) is exact, so extents and
 * offsets come out affine, and the stride of an {@code s × s} matrix quadratic. Sizes below a window's start get a
 * static nest each, lowered at that size, where the group is defined there (its types infer, no result is empty, the
 * nest is well formed; at size 0 the group without its empty tensors, {@link SizeZero}); elsewhere the shape function
 * gives the size as -1, which the VM's check of the call reports.
 *
 * <p>Every sample is lowered with one configuration: the template's default at a large size of the class whose tiles every
 * sample can take ({@link #largeDefault}; a convolution's columns per register tile are divisors of its width, and the
 * samples are small), then one built knob by knob from the samples' defaults ({@link #commonConfig}), then each sample's
 * own default, then others; if no window merges the group is refused, naming it. A loop's kind (parallel, vectorized,
 * unrolled) comes from the largest sample. Local tiles that grow with the size (a reduction's accumulators across a width) become C
 * variable-length arrays (at most affine in {@code t}), global intermediates heap blocks of a run-time size. Outputs
 * scheduled on their own take the injective inner form ({@link PrimitiveLowering#INNER_OUTPUTS}).
 *
 * <p>Why samples and not symbolic extents in the tensor-expression layer: every template rule would need a symbolic
 * form, while sampling reuses them as they are and checks the outcome. What it cannot prove: that the form holds between
 * and beyond the samples; five samples per class, two of them checks, are the evidence, and the tests compare every
 * residue (and sizes beyond the samples) against the interpreter.
 *
 * <p>Parameters: the group's inputs, then {@code size} (int64 {@code [1]}, the size {@code s}), then its results; each
 * flattened (one-dimensional accesses), with {@link TensorSpec#DYNAMIC} where the group's type has {@code ?}.
 */
public final class WidthKernels {
    /**
     * The name of a width kernel's size parameter, which the executable's kernel signatures carry: the VM tells a width
     * kernel (one size for every dynamic dimension) from a row kernel (one row count) by it.
     */
    public static final String SIZE_PARAMETER = "size";
    /** The residue classes of the size: one variant each. */
    public static final int PERIOD = 8;
    /** A window's sampled quotients {@code t} from its start: three consecutive to fit, two to check. */
    private static final long[] SAMPLE_OFFSETS = {0, 1, 2, 4, 7};
    /** Where windows may start; sizes below the start are static nests, one per size. */
    private static final long[] WINDOW_STARTS = {1, 2, 4};
    /** The quotients of the sizes whose default configuration a kernel takes where valid at every sample ({@link #largeDefault}). */
    private static final long LARGE_QUOTIENT = 64;
    private static final int LARGE_TRIES = 16;
    /** Shape functions fit result dimensions from here on and tabulate every size below {@code PERIOD} times this. */
    private static final long SHAPE_START = 4;

    private WidthKernels() {}

    /** The kernel of {@code primitive}, named {@code name}; a group the sampling cannot merge is an {@link UnsupportedOperationException} naming it. */
    public static LoweredKernel lower(Function primitive, String name, Target target) {
        return ScopedValue.where(PrimitiveLowering.INNER_OUTPUTS, true).call(() -> lowerInScope(primitive, name, target));
    }

    private static LoweredKernel lowerInScope(Function primitive, String name, Target target) {
        GroupTypes typed = GroupTypes.of(primitive);
        Buffer size = Buffer.of(SIZE_PARAMETER, List.of(1), DType.INT64);
        PrimExpr s = new Load(size, List.of(PrimExpr.of(0)));
        PrimExpr t = s.div(PERIOD), residue = s.mod(PERIOD);
        // the parameters' order, names and types are the same at every size: the kernel's, flattened
        LoweredKernel reference = PrimitiveLowering.lower(pin(primitive, PERIOD * WINDOW_STARTS[WINDOW_STARTS.length - 1]), name, target, Optional.empty());
        List<Buffer> params = reference.func().params().stream().map(b -> Buffer.of(b.name(), List.of((int) b.elementCount()), b.dtype())).toList();
        List<Window> windows = new ArrayList<>();
        List<Stmt> smallByResidue = new ArrayList<>();
        // per class, the least quotient from which its merged nest is right: the window's start, or lower where the nest
        // lowered at a smaller size is exactly what the merged one predicts there
        long[] lowest = new long[PERIOD];
        for (int r = 0; r < PERIOD; r++) {
            Window w = fittedWindow(primitive, name, target, r);
            windows.add(w);
            // below the window: each size its own static nest, where the group is defined at that size (else the shape
            // function has refused the size and the VM stops before the call)
            Stmt[] small = new Stmt[(int) w.ts()[0]];
            lowest[r] = w.ts()[0];
            boolean predicted = true;
            for (int q = (int) w.ts()[0] - 1; q >= 0; q--) {
                int size0 = PERIOD * q + r;
                if (size0 == 0) {
                    // empty inputs: the group rewritten without empty tensors (SizeZero), never predicted by the merged nest;
                    // lowered once here rather than once more through covered
                    predicted = false;
                    Optional<LoweredFunc> zero = SizeZero.lower(primitive, name, target);
                    if (zero.isPresent()) small[0] = SampleUnifier.unify(List.of(zero.get()), new long[] {0}, params, t, "group " + name + " (size 0)");
                    continue;
                }
                if (!covered(primitive, target, size0)) {
                    predicted = false;
                    continue;
                }
                LoweredKernel k = PrimitiveLowering.lower(pin(primitive, size0), name, target, Optional.empty());
                if (predicted && SampleUnifier.predicts(w.merged(), k.func(), q)) {
                    lowest[r] = q;
                    continue;
                }
                predicted = false;
                small[q] = SampleUnifier.unify(List.of(k.func()), new long[] {q}, params, t, "group " + name + " (size " + size0 + ")");
            }
            smallByResidue.add(dispatch(java.util.Arrays.asList(small).subList(0, (int) lowest[r]), t));
        }
        long start = lowest[PERIOD - 1];
        Optional<Stmt> one = java.util.Arrays.stream(lowest).allMatch(q -> q == start)
                ? SampleUnifier.collapse(windows.stream().map(Window::merged).toList(), PERIOD, params, s) : Optional.empty();
        Stmt body;
        if (one.isPresent()) {
            // every class has one nest in s: the sizes from the window on share it (an eighth of the code to compile)
            body = new IfThenElse(t.ge(start), one.get(), Optional.ofNullable(dispatch(smallByResidue, residue)));
        } else {
            List<Stmt> variants = new ArrayList<>();
            for (int r = 0; r < PERIOD; r++) {
                Window w = windows.get(r);
                Stmt fitted = SampleUnifier.rebuild(w.merged(), params, t);
                variants.add(lowest[r] == 0 ? fitted : new IfThenElse(t.ge(lowest[r]), fitted, Optional.ofNullable(smallByResidue.get(r))));
            }
            body = dispatch(variants, residue);
        }
        int inputs = reference.func().numInputs();
        List<Buffer> all = new ArrayList<>(params.subList(0, inputs));
        all.add(size);
        all.addAll(params.subList(inputs, params.size()));
        List<TensorSpec> specs = new ArrayList<>();
        List<Buffer> shaped = reference.func().params();
        for (int i = 0; i < shaped.size(); i++) {
            List<Dim> dims = typed.flat().get(i).shape();
            List<Integer> shape = new ArrayList<>(shaped.get(i).shape());
            for (int d = 0; d < shape.size(); d++) if (!dims.get(d).isStatic()) shape.set(d, TensorSpec.DYNAMIC);
            specs.add(new TensorSpec(shaped.get(i).name(), shape, shaped.get(i).dtype()));
            if (i == inputs - 1) specs.add(new TensorSpec(size.name(), List.of(1), DType.INT64));
        }
        LoweredFunc func = new LoweredFunc(name, all, inputs + 1, body);
        // the configuration reported is that of the sizes 0 mod PERIOD (other classes may differ in their tiles)
        return new LoweredKernel(func, new KernelSignature(name, specs, inputs + 1), reference.workload() + " size=?", windows.getFirst().config());
    }

    /** The configuration the kernel of {@code primitive} runs the sizes {@code r} mod {@link #PERIOD} with (from its window on). */
    static ScheduleConfig configOf(Function primitive, String name, Target target, int r) {
        return ScopedValue.where(PrimitiveLowering.INNER_OUTPUTS, true).call(() -> fittedWindow(primitive, name, target, r).config());
    }

    /** {@code if (key == 0) variants[0] else if (key == 1) ...}, skipping absent (null) variants; null when all are. */
    private static Stmt dispatch(List<Stmt> variants, PrimExpr key) {
        Stmt body = null;
        for (int r = variants.size() - 1; r >= 0; r--) {
            if (variants.get(r) == null) continue;
            body = new IfThenElse(new Binary(BinaryOp.EQ, key, PrimExpr.of(r)), variants.get(r), Optional.ofNullable(body));
        }
        return body;
    }

    /**
     * Whether the kernel covers size {@code s} below its window: the group is defined there (its types infer, no result
     * is empty) and lowers to a well-formed nest; at size 0, where {@link SizeZero} rewrites it without empty tensors.
     * The kernel and its shape function are built apart and both ask, so answers are kept per group text and size.
     */
    private static boolean covered(Function primitive, Target target, int s) {
        String key = RelayPrinter.print(primitive) + "\n" + target + "\n" + s;
        synchronized (COVERED) {
            Boolean known = COVERED.get(key);
            if (known != null) return known;
        }
        boolean ok;
        try {
            if (s == 0) return cache(key, SizeZero.lower(primitive, "covered", target).isPresent());
            GroupTypes typed = GroupTypes.of(pin(primitive, s));
            ok = typed.flat().stream().allMatch(t -> t.isStatic() && java.util.Arrays.stream(dims(t)).allMatch(d -> d > 0))
                    && SampleUnifier.wellFormed(PrimitiveLowering.lower(pin(primitive, s), "covered", target, Optional.empty()).func());
        } catch (RuntimeException e) {
            ok = false;
        }
        return cache(key, ok);
    }

    private static boolean cache(String key, boolean ok) {
        synchronized (COVERED) {
            COVERED.put(key, ok);
        }
        return ok;
    }

    /** {@link #covered}'s answers, the oldest dropped beyond a few thousand. */
    private static final Map<String, Boolean> COVERED = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 4096;
        }
    };

    /** The nest of one residue class for {@code t >= ts[0]}, merged from the samples at {@code PERIOD·ts[i] + r}. */
    private record Window(long[] ts, SampleUnifier.Merged merged, ScheduleConfig config) {}

    /** At most this many further configurations are tried per window when neither the defaults nor the common one merge. */
    private static final int MAX_CONFIGS = 24;

    /**
     * The first window of samples (starting at {@code t} = 1, 2, then 4) whose nests merge for residue {@code r}: small
     * sizes can take other tiles (a tile as wide as a short row, a loop of one iteration dropped) than large ones. In
     * each window the large size's default ({@link #largeDefault}), then the one built knob by knob ({@link #commonConfig}),
     * then each sample's own default; only when no window merges so, the other configurations valid at every sample,
     * those closest to the first of these.
     */
    private static Window fittedWindow(Function primitive, String name, Target target, int r) {
        List<String> why = new ArrayList<>();
        String what = "group " + name + " (sizes " + r + " mod " + PERIOD + ")";
        // first the defaults and the common configuration in every window, then the others: a register tile of one column
        // that merges from t = 1 is worth less than one of eight that merges from t = 2 (smaller sizes get static nests)
        List<Optional<ScheduleConfig>> larges = new ArrayList<>(); // the defaults at large sizes, made once for every window
        for (boolean others : new boolean[] {false, true}) {
            for (long start : WINDOW_STARTS) {
                long[] ts = new long[SAMPLE_OFFSETS.length];
                for (int i = 0; i < ts.length; i++) ts[i] = start + SAMPLE_OFFSETS[i];
                List<KernelPlan> plans = java.util.Arrays.stream(ts).mapToObj(q -> PrimitiveLowering.plan(pin(primitive, PERIOD * q + r), name, target)).toList();
                Optional<ScheduleConfig> large = largeDefault(primitive, name, target, r, plans, larges), built = Optional.empty();
                try {
                    built = Optional.of(commonConfig(plans, name));
                } catch (UnsupportedOperationException e) {
                    if (large.isEmpty()) why.add("from t=" + start + ": " + e.getMessage());
                }
                Optional<ScheduleConfig> first = large.isPresent() ? large : built;
                List<ScheduleConfig> configs = new ArrayList<>(); // null: each sample its own default
                if (!others) {
                    first.ifPresent(configs::add);
                    built.filter(c -> !configs.contains(c)).ifPresent(configs::add);
                    configs.add(null); // a group whose common configuration does not lower at some sample
                } else if (first.isPresent()) {
                    ScheduleConfig common = first.get();
                    plans.getFirst().space().all()
                            .filter(c -> plans.stream().allMatch(p -> p.space().contains(c)))
                            .filter(c -> !c.equals(common))
                            .sorted(java.util.Comparator.comparingLong(c -> c.knobs().entrySet().stream().filter(e -> !e.getValue().equals(common.knobs().get(e.getKey()))).count()))
                            .limit(MAX_CONFIGS).forEach(configs::add);
                }
                for (ScheduleConfig config : configs) {
                    List<LoweredFunc> funcs;
                    try {
                        funcs = plans.stream().map(p -> PrimitiveLowering.lower(p, config == null ? p.defaultConfig() : config).func()).toList();
                    } catch (InvalidConfigException | UnsupportedOperationException e) {
                        continue;
                    }
                    Optional<SampleUnifier.Merged> nest = merge(funcs, ts, what, why);
                    if (nest.isPresent()) return new Window(ts, nest.get(), config == null ? plans.getLast().defaultConfig() : config);
                }
            }
        }
        List<String> reasons = why.stream().distinct().toList();
        throw new UnsupportedOperationException("group " + name + ": no window of sizes " + r + " mod " + PERIOD + " and no configuration lowers to nests that merge: "
                + String.join("; ", reasons.subList(0, Math.min(3, reasons.size()))) + (reasons.size() > 3 ? "; ..." : ""));
    }

    /**
     * The template's default at a large size of residue {@code r}, the first from {@link #LARGE_QUOTIENT} on that is valid
     * at every sample ({@code plans}): the configuration the template would choose where the time goes, among those one
     * nest can use at every size of the class. The samples are small: their defaults run loops serially that a wide image
     * runs on threads (the generated code still runs a parallel loop on one thread while its run-time work is small), and
     * their tiles are chosen from divisors the class does not share. A size whose extents have no divisors but the class's
     * (for widths 8t + 4, a quarter prime) leaves the template choosing among the tiles every size can take, rows
     * included when columns are few. Empty when none of {@link #LARGE_TRIES} sizes gives one. {@code larges} keeps the
     * defaults made so far (empty where the group is not defined at that size).
     */
    private static Optional<ScheduleConfig> largeDefault(Function primitive, String name, Target target, int r, List<KernelPlan> plans,
                                                         List<Optional<ScheduleConfig>> larges) {
        for (int i = 0; i < LARGE_TRIES; i++) {
            if (i == larges.size()) {
                Optional<ScheduleConfig> made;
                try {
                    made = Optional.of(PrimitiveLowering.plan(pin(primitive, PERIOD * (LARGE_QUOTIENT + i) + r), name, target).defaultConfig());
                } catch (RuntimeException e) {
                    made = Optional.empty();
                }
                larges.add(made);
            }
            Optional<ScheduleConfig> c = larges.get(i);
            if (c.isEmpty()) return Optional.empty(); // not defined at large sizes: the samples decide
            if (plans.stream().allMatch(p -> p.space().contains(c.get()))) return c;
        }
        return Optional.empty();
    }

    /** {@code samples} merged, or empty (the reason added to {@code why}). */
    private static Optional<SampleUnifier.Merged> merge(List<LoweredFunc> samples, long[] ts, String what, List<String> why) {
        if (!SampleUnifier.sameForm(samples)) {
            why.add("from t=" + ts[0] + " the nests differ in form");
            return Optional.empty();
        }
        try {
            return Optional.of(SampleUnifier.merge(samples, ts, what));
        } catch (UnsupportedOperationException e) {
            why.add("from t=" + ts[0] + ": " + e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Per knob: the largest sample's default when every sample has that value, else the largest value every sample has
     * that is at most that default (a register tile that divides every sampled width, as wide as the template would make
     * it for the largest); a knob that default leaves out stays out.
     */
    private static ScheduleConfig commonConfig(List<KernelPlan> plans, String name) {
        KernelPlan first = plans.getFirst();
        for (KernelPlan p : plans) {
            if (!p.template().equals(first.template())) {
                throw new UnsupportedOperationException("group " + name + ": the sampled sizes choose templates " + first.template() + " and " + p.template());
            }
        }
        Map<String, Object> knobs = new LinkedHashMap<>();
        for (Knob k : first.space().knobs()) {
            List<Object> common = new ArrayList<>(k.candidates());
            for (KernelPlan p : plans) {
                Knob other = p.space().knobs().stream().filter(o -> o.name().equals(k.name())).findFirst().orElse(null);
                if (other == null) throw new UnsupportedOperationException("group " + name + ": knob " + k.name() + " is missing at some sampled size");
                common.retainAll(other.candidates());
            }
            if (common.isEmpty()) throw new UnsupportedOperationException("group " + name + ": knob " + k.name() + " has no value valid at every sampled size");
            List<Object> defaults = plans.stream().map(p -> p.defaultConfig().knobs().get(k.name())).toList();
            // a knob the largest sample's default leaves out keeps its absent meaning, as there (not the largest
            // candidate: that gave convolutions multi-row tiles and unrolled input-channel loops)
            if (defaults.getLast() == null) continue;
            Object chosen;
            if (common.contains(defaults.getLast())) {
                chosen = defaults.getLast(); // the largest sample's choice: large sizes are where the time goes
            } else if (common.getFirst() instanceof Integer) {
                int largest = defaults.getLast() instanceof Integer d ? d : Integer.MAX_VALUE;
                chosen = common.stream().mapToInt(c -> (Integer) c).filter(c -> c <= largest).max()
                        .orElse(common.stream().mapToInt(c -> (Integer) c).min().orElseThrow());
            } else {
                chosen = common.contains(defaults.getFirst()) ? defaults.getFirst() : common.getFirst();
            }
            if (chosen != null) knobs.put(k.name(), chosen);
        }
        return new ScheduleConfig(first.template(), knobs);
    }

    /**
     * The shape function of the kernel of {@code primitive} (a Primitive function compiled like any kernel): from the
     * shape of the input the size is read from ({@code rank} int64s, the size at {@code dim}) it gives the size itself
     * (int64 {@code [1]}; -1 where the kernel does not cover it), then per result of dynamic shape its shape and byte size (int64 vectors). Each dynamic result dimension is, per
     * residue class, the polynomial in {@code t} that type inference at the samples shows, selected by {@code take}; below
     * {@link #PERIOD} each size's own dimensions (0 where the group is not defined there, too narrow: then the size given is -1).
     */
    public static Function shapeFunction(Function primitive, String name, Target target, int rank, int dim) {
        return ScopedValue.where(PrimitiveLowering.INNER_OUTPUTS, true).call(() -> shapeFunctionInScope(primitive, name, target, rank, dim));
    }

    private static Function shapeFunctionInScope(Function primitive, String name, Target target, int rank, int dim) {
        GroupTypes typed = GroupTypes.of(primitive);
        List<TensorType> results = typed.results();
        long[] ts = new long[SAMPLE_OFFSETS.length];
        for (int i = 0; i < ts.length; i++) ts[i] = SHAPE_START + SAMPLE_OFFSETS[i];
        // dims[r][k][j]: result j's shape at sample k of residue r
        long[][][][] dims = new long[PERIOD][ts.length][][];
        for (int r = 0; r < PERIOD; r++) {
            for (int k = 0; k < ts.length; k++) dims[r][k] = resultDims(pin(primitive, PERIOD * ts[k] + r));
        }
        // every size below the fitted range on its own: its dimensions where the group is defined there
        int smallSizes = (int) (PERIOD * SHAPE_START);
        long[] smallOk = new long[smallSizes];
        long[][][] small = new long[smallSizes][][];
        for (int q = 0; q < smallSizes; q++) {
            if (!covered(primitive, target, q)) continue;
            smallOk[q] = 1;
            small[q] = resultDims(pin(primitive, q));
        }
        Var shape = Var.fresh("shape", TensorType.of(DType.INT64, rank));
        Expr s = new Call(dev.relayfarm.ir.Op.get("strided_slice"), List.of(shape), Attrs.of("begin", AttrValue.ints(dim)).with("end", AttrValue.ints(dim + 1)));
        Expr t = Call.op("floor_divide", s, longs(PERIOD));
        Expr residue = Call.op("floor_mod", s, longs(PERIOD));
        Expr pairs = Call.op("floor_divide", Call.op("multiply", t, Call.op("subtract", t, longs(1))), longs(2));
        Expr isSmall = Call.op("less", s, longs(smallSizes));
        Expr smallIndex = Call.op("minimum", s, longs(smallSizes - 1));
        Expr covered = Call.op("logical_or", Call.op("logical_not", isSmall), Call.op("greater", take(smallOk, smallIndex), longs(0)));
        // the size, or -1 where the kernel does not cover it: the VM's check of the call names the kernel and the size
        List<Expr> fields = new ArrayList<>(List.of(Call.op("where", covered, s, longs(-1))));
        for (int j = 0; j < results.size(); j++) {
            TensorType out = results.get(j);
            if (out.isStatic()) continue; // allocated as any static result
            List<Expr> dimExprs = new ArrayList<>();
            for (int d = 0; d < out.shape().size(); d++) {
                if (out.shape().get(d).isStatic()) {
                    dimExprs.add(longs(out.shape().get(d).value()));
                    continue;
                }
                long[] a = new long[PERIOD], b = new long[PERIOD], c = new long[PERIOD];
                for (int r = 0; r < PERIOD; r++) {
                    long[] ys = new long[ts.length];
                    for (int k = 0; k < ts.length; k++) ys[k] = dims[r][k][j][d];
                    final int rr = r, jj = j, dd = d;
                    SizePolynomial p = SizePolynomial.fit(ts, ys).orElseThrow(() -> new UnsupportedOperationException("group " + name + ": dimension " + dd
                            + " of result " + jj + " takes " + java.util.Arrays.toString(ys) + " at sizes " + PERIOD + "t+" + rr + ", t=" + java.util.Arrays.toString(ts)
                            + " (not a quadratic in t)"));
                    a[r] = p.a();
                    b[r] = p.b();
                    c[r] = p.c();
                }
                Expr value = Call.op("add", take(a, residue), Call.op("add", Call.op("multiply", take(b, residue), t), Call.op("multiply", take(c, residue), pairs)));
                long[] z = new long[smallSizes];
                for (int q = 0; q < smallSizes; q++) z[q] = small[q] == null ? 0 : small[q][j][d];
                dimExprs.add(Call.op("where", isSmall, take(z, smallIndex), value));
            }
            Expr full = dimExprs.size() == 1 ? dimExprs.getFirst()
                    : new Call(dev.relayfarm.ir.Op.get("concatenate"), List.of(new Tuple(dimExprs)), Attrs.of("axis", AttrValue.of(0)));
            Expr bytes = longs(out.dtype().storageBytes() * out.dtype().lanes());
            for (Expr d : dimExprs) bytes = Call.op("multiply", bytes, d);
            fields.add(full);
            fields.add(bytes);
        }
        return new Function(List.of(shape), new Tuple(fields)).withAttrs(Attrs.of(Function.PRIMITIVE, AttrValue.of(1)));
    }

    /** The result shapes of a group whose parameters are static. */
    private static long[][] resultDims(Function pinned) {
        GroupTypes typed = GroupTypes.of(pinned);
        return typed.results().stream().map(WidthKernels::dims).toArray(long[][]::new);
    }

    private static long[] dims(TensorType t) {
        return t.shape().stream().mapToLong(Dim::value).toArray();
    }

    private static Expr longs(long... v) {
        return new Constant(NDArray.fromLongs(DType.INT64, new int[] {v.length}, v));
    }

    private static Expr take(long[] table, Expr index) {
        return new Call(dev.relayfarm.ir.Op.get("take"), List.of(longs(table), index), Attrs.of("axis", AttrValue.of(0)));
    }

    /** {@code primitive} with every {@code ?} of its parameters pinned to {@code size}. */
    static Function pin(Function primitive, long size) {
        return RowKernels.retypeParams(primitive, t -> pin(t, size));
    }

    private static Type pin(Type t, long size) {
        return switch (t) {
            case TensorType tt -> new TensorType(tt.shape().stream().map(d -> d instanceof Dim.Any ? Dim.of(size) : d).toList(), tt.dtype());
            case TupleType tt -> new TupleType(tt.fields().stream().map(f -> pin(f, size)).toList());
            case null, default -> t;
        };
    }
}
