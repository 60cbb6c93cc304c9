package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BitCast;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.Evaluate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Scope;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Anti-unification of one group's loop nests lowered at sample sizes of one residue class ({@link WidthKernels}): the
 * nests must have the same form, statement for statement and operator for operator; each integer in them (a loop
 * extent, an index offset, a buffer's stride or element count) is fitted as a {@link SizePolynomial} of
 * {@code t = size / PERIOD} and becomes that expression, so the first sample's nest, rewritten, is the nest for every
 * size of the class.
 *
 * <p>Every access is flattened first (the offset written out from the buffer's row-major strides): a stride that
 * grows with the size is then one more fitted integer, where a buffer's static shape could not carry it. A float that
 * differs between samples, a local (stack) buffer whose size does, or any difference of form is refused, naming it.
 */
final class SampleUnifier {
    /** One sample's nest reduced to its form (a token string), its integers and its floats in walk order. */
    private record Skeleton(String form, long[] ints, double[] floats, java.util.Set<Integer> localSizes, List<ForKind> kinds) {}

    /**
     * What a float of the nest becomes: itself when the samples agree, else the cast of a fitted integer (a pool's
     * element count) or one over it (a mean's reciprocal).
     */
    private record FloatFit(double constant, SizePolynomial count, boolean reciprocal) {}

    private SampleUnifier() {}

    /**
     * The samples of one residue class merged: the first sample's nest, the nests' common form, each integer's
     * polynomial in {@code t}, each float's fit and each loop's kind (the largest sample's: a loop's kind, serial,
     * parallel, vectorized or unrolled, does not change what it computes, and a template may pick it from the work).
     */
    record Merged(LoweredFunc first, String form, List<SizePolynomial> ints, List<FloatFit> floats, List<ForKind> kinds) {}

    /**
     * {@code samples} (lowered at {@code t = ts[i]}) merged; a mismatch is an {@link UnsupportedOperationException}
     * naming {@code what}.
     */
    static Merged merge(List<LoweredFunc> samples, long[] ts, String what) {
        List<Skeleton> skeletons = new ArrayList<>();
        for (LoweredFunc f : samples) skeletons.add(skeleton(f));
        Skeleton first = skeletons.getFirst();
        for (int i = 1; i < skeletons.size(); i++) {
            if (!skeletons.get(i).form().equals(first.form())) {
                throw new UnsupportedOperationException(what + ": the loop nests lowered at t=" + ts[0] + " and t=" + ts[i] + " differ in form (" + firstDifference(first.form(), skeletons.get(i).form())
                        + "): the schedule depends on the size by more than its extents");
            }
        }
        List<SizePolynomial> fitted = new ArrayList<>();
        for (int k = 0; samples.size() == 1 && k < first.ints().length; k++) fitted.add(new SizePolynomial(first.ints()[k], 0, 0)); // one size: as it is
        for (int k = 0; samples.size() > 1 && k < first.ints().length; k++) {
            long[] ys = new long[skeletons.size()];
            for (int i = 0; i < ys.length; i++) ys[i] = skeletons.get(i).ints()[k];
            final int at = k;
            fitted.add(SizePolynomial.fit(ts, ys).orElseThrow(() -> new UnsupportedOperationException(what + ": integer #" + at + " of the loop nest takes the values "
                    + java.util.Arrays.toString(ys) + " at t=" + java.util.Arrays.toString(ts) + ", not a quadratic in t")));
        }
        for (int k : first.localSizes()) {
            if (fitted.get(k).c() != 0) {
                throw new UnsupportedOperationException(what + ": a local (stack) buffer of " + java.util.Arrays.toString(skeletons.stream().mapToLong(x -> x.ints()[k]).toArray())
                        + " elements at t=" + java.util.Arrays.toString(ts) + " grows faster than the size");
            }
        }
        List<FloatFit> floats = new ArrayList<>();
        for (int k = 0; k < first.floats().length; k++) {
            double[] vs = new double[skeletons.size()];
            for (int i = 0; i < vs.length; i++) vs[i] = skeletons.get(i).floats()[k];
            floats.add(fitFloat(vs, ts, what, k));
        }
        return new Merged(samples.getFirst(), first.form(), fitted, floats, skeletons.getLast().kinds());
    }

    /** The nest of {@code m} over {@code params} (one-dimensional buffers standing for its parameters, by position), in {@code t}. */
    static Stmt rebuild(Merged m, List<Buffer> params, PrimExpr t) {
        List<java.util.function.Function<DType, PrimExpr>> ints = m.ints().stream().<java.util.function.Function<DType, PrimExpr>>map(p -> dt -> p.expr(t, dt)).toList();
        List<java.util.function.Function<DType, PrimExpr>> floats = new ArrayList<>();
        for (FloatFit f : m.floats()) {
            floats.add(dt -> {
                if (f.count() == null) return new FloatImm(f.constant(), dt);
                PrimExpr count = new Cast(dt, f.count().expr(t, DType.INT64));
                return f.reciprocal() ? new Binary(dev.relayfarm.kernel.expr.BinaryOp.DIV, new FloatImm(1.0, dt), count) : count;
            });
        }
        return new Walker(m.first().params(), params, new Rebuild(ints, floats, m.kinds())).stmt(m.first().body());
    }

    /**
     * Whether {@code f}, the group lowered at quotient {@code t}, is what {@code m}'s nest computes there: the same form,
     * every integer its polynomial's value at {@code t}, every float its fit's. Then the merged nest covers {@code t} too
     * and needs no static nest of its own.
     */
    static boolean predicts(Merged m, LoweredFunc f, long t) {
        Skeleton k = skeleton(f);
        if (!k.form().equals(m.form())) return false;
        for (int i = 0; i < k.ints().length; i++) if (m.ints().get(i).at(t) != k.ints()[i]) return false;
        for (int i = 0; i < k.floats().length; i++) {
            FloatFit fit = m.floats().get(i);
            double v = k.floats()[i];
            if (fit.count() == null ? Double.doubleToRawLongBits(fit.constant()) != Double.doubleToRawLongBits(v)
                    : fit.count().at(t) == 0 || (fit.reciprocal() ? (float) (1.0 / fit.count().at(t)) != (float) v : fit.count().at(t) != v)) {
                return false;
            }
        }
        return true;
    }

    /** {@link #merge} then {@link #rebuild}. */
    static Stmt unify(List<LoweredFunc> samples, long[] ts, List<Buffer> params, PrimExpr t, String what) {
        return rebuild(merge(samples, ts, what), params, t);
    }

    /**
     * One nest for every residue class, in the size {@code s} itself, when the classes' nests ({@code residues}, merged
     * at {@code s = period·t + r}) have one form and constant floats, and each integer is one polynomial
     * {@code A + B·s + C·s²} with integer coefficients across all of them (an extent of {@code s}, a stride of
     * {@code s²}); else empty. A stride-2 extent, {@code (s + 1) / 2}, differs by class and keeps the classes apart.
     */
    static Optional<Stmt> collapse(List<Merged> residues, int period, List<Buffer> params, PrimExpr s) {
        Merged first = residues.getFirst();
        for (Merged m : residues) {
            if (!m.form().equals(first.form()) || !m.kinds().equals(first.kinds())) return Optional.empty();
            for (int k = 0; k < m.floats().size(); k++) {
                FloatFit f = m.floats().get(k);
                if (f.count() != null || Double.doubleToRawLongBits(f.constant()) != Double.doubleToRawLongBits(first.floats().get(k).constant())) return Optional.empty();
            }
        }
        List<java.util.function.Function<DType, PrimExpr>> ints = new ArrayList<>();
        for (int k = 0; k < first.ints().size(); k++) {
            // through s = period·1, period·2, period·3 (residue 0), then checked at three sizes of every class: a quadratic
            // agrees with another everywhere once it does at three points
            SizePolynomial p0 = first.ints().get(k);
            long y0 = p0.at(1), y1 = p0.at(2), y2 = p0.at(3), h = period;
            long d2 = y2 - 2 * y1 + y0;
            if (d2 % (2 * h * h) != 0) return Optional.empty();
            long c = d2 / (2 * h * h);
            long s0 = h, s1 = 2 * h;
            long bNum = (y1 - y0) - c * (s1 * s1 - s0 * s0);
            if (bNum % h != 0) return Optional.empty();
            long b = bNum / h;
            long a = y0 - b * s0 - c * s0 * s0;
            for (int r = 0; r < residues.size(); r++) {
                SizePolynomial pr = residues.get(r).ints().get(k);
                for (long t = 1; t <= 3; t++) {
                    long size = period * t + r;
                    if (a + b * size + c * size * size != pr.at(t)) return Optional.empty();
                }
            }
            final long fa = a, fb = b, fc = c;
            ints.add(dt -> {
                if (fb == 0 && fc == 0) return new IntImm(fa, dt);
                PrimExpr e = fb == 0 ? null : fb == 1 ? s : s.mul(fb);
                if (fc != 0) {
                    PrimExpr q = fc == 1 ? s.mul(s) : s.mul(s).mul(fc);
                    e = e == null ? q : e.add(q);
                }
                if (fa != 0) e = e.add(fa);
                return dt.equals(DType.INT64) ? e : new Cast(dt, e);
            });
        }
        List<java.util.function.Function<DType, PrimExpr>> floats = first.floats().stream()
                .<java.util.function.Function<DType, PrimExpr>>map(f -> dt -> new FloatImm(f.constant(), dt)).toList();
        return Optional.of(new Walker(first.first().params(), params, new Rebuild(ints, floats, first.kinds())).stmt(first.first().body()));
    }

    private static FloatFit fitFloat(double[] vs, long[] ts, String what, int at) {
        if (java.util.Arrays.stream(vs).allMatch(v -> Double.doubleToRawLongBits(v) == Double.doubleToRawLongBits(vs[0]))) return new FloatFit(vs[0], null, false);
        for (boolean reciprocal : new boolean[] {false, true}) {
            long[] ys = new long[vs.length];
            boolean integral = true;
            for (int i = 0; i < vs.length && integral; i++) {
                double x = reciprocal ? 1.0 / vs[i] : vs[i];
                ys[i] = Math.round(x);
                // exact in the float's own precision: the count itself, or the float nearest one over it
                integral = ys[i] != 0 && (reciprocal ? (float) (1.0 / ys[i]) == (float) vs[i] : ys[i] == vs[i]);
            }
            if (!integral) continue;
            Optional<SizePolynomial> p = vs.length == 1 ? Optional.of(new SizePolynomial(ys[0], 0, 0)) : SizePolynomial.fit(ts, ys);
            if (p.isPresent()) return new FloatFit(0, p.get(), reciprocal);
        }
        throw new UnsupportedOperationException(what + ": float #" + at + " of the loop nest takes the values " + java.util.Arrays.toString(vs) + " at t="
                + java.util.Arrays.toString(ts) + " (neither constant, nor a count or one over a count quadratic in t)");
    }

    /**
     * Whether every buffer {@code f} reads or writes is a parameter or allocated around the access (the lowering of some
     * groups at a size of one is not: a softmax over rows of one reads its maximum before allocating it).
     */
    static boolean wellFormed(LoweredFunc f) {
        java.util.Set<Long> live = new java.util.HashSet<>();
        for (Buffer b : f.params()) live.add(b.id());
        return wellFormed(f.body(), live);
    }

    private static boolean wellFormed(Stmt s, java.util.Set<Long> live) {
        return switch (s) {
            case For f -> reads(f.min(), live) && reads(f.extent(), live) && wellFormed(f.body(), live);
            case Store st -> live.contains(st.buffer().id()) && st.indices().stream().allMatch(i -> reads(i, live)) && reads(st.value(), live);
            case Allocate a -> {
                boolean added = live.add(a.buffer().id());
                boolean ok = wellFormed(a.body(), live);
                if (added) live.remove(a.buffer().id());
                yield ok;
            }
            case IfThenElse i -> reads(i.condition(), live) && wellFormed(i.then(), live) && i.otherwise().map(o -> wellFormed(o, live)).orElse(true);
            case Seq q -> q.stmts().stream().allMatch(x -> wellFormed(x, live));
            case Evaluate e -> reads(e.value(), live);
        };
    }

    private static boolean reads(PrimExpr e, java.util.Set<Long> live) {
        boolean[] ok = {true};
        dev.relayfarm.kernel.expr.PrimExprs.forEach(e, x -> {
            if (x instanceof Load l && !live.contains(l.buffer().id())) ok[0] = false;
        });
        return ok[0];
    }

    /** Whether the nests have one form (the integers aside). */
    static boolean sameForm(List<LoweredFunc> samples) {
        return samples.stream().map(SampleUnifier::skeleton).map(Skeleton::form).distinct().count() == 1;
    }

    private static Skeleton skeleton(LoweredFunc f) {
        Walker w = new Walker(f.params(), null, null);
        w.stmt(f.body());
        return new Skeleton(w.form.toString(), w.ints.stream().mapToLong(Long::longValue).toArray(), w.floats.stream().mapToDouble(Double::doubleValue).toArray(), w.localSizes, w.kinds);
    }

    private static String firstDifference(String a, String b) {
        int i = 0;
        while (i < a.length() && i < b.length() && a.charAt(i) == b.charAt(i)) i++;
        int from = Math.max(0, i - 60);
        return "at '" + a.substring(from, Math.min(a.length(), i + 40)) + "' against '" + b.substring(from, Math.min(b.length(), i + 40)) + "'";
    }

    /** What a rebuilding walk puts in place of the integers and floats (expressions of their type), and the loops' kinds, in walk order. */
    private static final class Rebuild {
        final List<java.util.function.Function<DType, PrimExpr>> ints, floats;
        final List<ForKind> kinds;
        int next, nextFloat, nextKind;

        Rebuild(List<java.util.function.Function<DType, PrimExpr>> ints, List<java.util.function.Function<DType, PrimExpr>> floats, List<ForKind> kinds) {
            this.ints = ints;
            this.floats = floats;
            this.kinds = kinds;
        }
    }

    /**
     * One walk of a nest, in a fixed order: it records the form and the integers, and (rebuilding) returns the nest with
     * the fitted integers, flattened accesses and the given parameters; otherwise it returns the flattened nest as is.
     */
    private static final class Walker {
        final StringBuilder form = new StringBuilder();
        final List<Long> ints = new ArrayList<>();
        final List<Double> floats = new ArrayList<>();
        final List<ForKind> kinds = new ArrayList<>();
        /** Which integers are the sizes of local (stack) buffers. */
        final java.util.Set<Integer> localSizes = new java.util.HashSet<>();
        final Rebuild rebuild;
        /** Each buffer's canonical number (parameters by position, then allocations in order) and its replacement. */
        final Map<Long, Integer> bufferIds = new HashMap<>();
        final Map<Long, Buffer> replaced = new HashMap<>();
        final Map<Var, Integer> varIds = new HashMap<>();

        Walker(List<Buffer> own, List<Buffer> params, Rebuild rebuild) {
            this.rebuild = rebuild;
            for (int i = 0; i < own.size(); i++) {
                bufferIds.put(own.get(i).id(), i);
                replaced.put(own.get(i).id(), params != null ? params.get(i) : flat(own.get(i)));
            }
        }

        /** An integer of the nest: recorded, or replaced by its fitted polynomial. */
        PrimExpr integer(long v, DType dtype) {
            form.append('#');
            ints.add(v);
            if (rebuild == null) return new IntImm(v, dtype);
            return rebuild.ints.get(rebuild.next++).apply(dtype);
        }

        /** A nominal integer whose value only the rebuilt nest needs as an expression (an element count). */
        PrimExpr count(long v) {
            return integer(v, DType.INT64);
        }

        int buffer(Buffer b) {
            Integer id = bufferIds.get(b.id());
            if (id == null) throw new IllegalStateException("buffer " + b.name() + " used outside its allocation");
            form.append('b').append(id).append(':').append(b.dtype());
            return id;
        }

        /** {@code b} as a one-dimensional buffer of as many elements (its accesses are flattened). */
        static Buffer flat(Buffer b) {
            return Buffer.of(b.name(), List.of((int) b.elementCount()), b.dtype());
        }

        Buffer target(Buffer b) {
            return replaced.getOrDefault(b.id(), b);
        }

        /** The row-major offset of {@code indices} in {@code b}: each stride an integer of the nest. */
        PrimExpr offset(Buffer b, List<PrimExpr> indices) {
            form.append('[');
            PrimExpr flat = null;
            long stride = 1;
            List<PrimExpr> terms = new ArrayList<>();
            for (int d = b.rank() - 1; d >= 0; d--) {
                PrimExpr i = expr(indices.get(d));
                terms.add(d == b.rank() - 1 ? i : i.mul(integer(stride, DType.INT64)));
                stride *= b.shape().get(d);
            }
            for (int k = terms.size() - 1; k >= 0; k--) flat = flat == null ? terms.get(k) : flat.add(terms.get(k));
            form.append(']');
            return flat == null ? new IntImm(0, DType.INT64) : flat;
        }

        Stmt stmt(Stmt s) {
            return switch (s) {
                case For f -> {
                    form.append("for(");
                    kinds.add(f.kind());
                    ForKind kind = rebuild == null ? f.kind() : rebuild.kinds.get(rebuild.nextKind++);
                    varIds.put(f.var(), varIds.size());
                    PrimExpr min = expr(f.min()), extent = expr(f.extent());
                    form.append(')');
                    yield new For(f.var(), min, extent, kind, stmt(f.body()));
                }
                case Store st -> {
                    form.append("store(");
                    buffer(st.buffer());
                    PrimExpr at = offset(st.buffer(), st.indices());
                    PrimExpr v = expr(st.value());
                    form.append(')');
                    yield new Store(target(st.buffer()), List.of(at), v);
                }
                case Allocate a -> {
                    Buffer b = a.buffer();
                    int id = bufferIds.size();
                    bufferIds.put(b.id(), id);
                    form.append("alloc").append(a.scope()).append(id).append(':').append(b.dtype()).append('(');
                    Optional<PrimExpr> elements = Optional.empty();
                    Buffer flat;
                    if (a.scope() == Scope.LOCAL) localSizes.add(ints.size()); // a stack array: at most affine in t (checked)
                    elements = Optional.of(count(b.elementCount()));
                    flat = flat(b);
                    if (elements.get() instanceof IntImm) elements = Optional.empty();
                    form.append(')');
                    replaced.put(b.id(), flat);
                    yield new Allocate(flat, a.scope(), stmt(a.body()), elements);
                }
                case IfThenElse i -> {
                    form.append("if(");
                    PrimExpr c = expr(i.condition());
                    Stmt then = stmt(i.then());
                    form.append(i.otherwise().isPresent() ? "else" : "");
                    Optional<Stmt> otherwise = i.otherwise().map(this::stmt);
                    form.append(')');
                    yield new IfThenElse(c, then, otherwise);
                }
                case Seq q -> {
                    form.append("seq").append(q.stmts().size()).append('(');
                    List<Stmt> out = new ArrayList<>();
                    for (Stmt x : q.stmts()) out.add(stmt(x));
                    form.append(')');
                    yield Seq.of(out);
                }
                case Evaluate e -> {
                    form.append("eval(");
                    PrimExpr v = expr(e.value());
                    form.append(')');
                    yield new Evaluate(v);
                }
            };
        }

        PrimExpr expr(PrimExpr e) {
            return switch (e) {
                case IntImm i -> integer(i.value(), i.dtype());
                case FloatImm f -> {
                    form.append('f').append(f.dtype());
                    floats.add(f.value());
                    yield rebuild == null ? f : rebuild.floats.get(rebuild.nextFloat++).apply(f.dtype());
                }
                case Var v -> {
                    Integer id = varIds.get(v);
                    if (id == null) {
                        id = varIds.size();
                        varIds.put(v, id);
                    }
                    form.append('v').append(id).append(':').append(v.dtype());
                    yield v;
                }
                case Load l -> {
                    form.append("load(");
                    buffer(l.buffer());
                    PrimExpr at = offset(l.buffer(), l.indices());
                    form.append(')');
                    yield new Load(target(l.buffer()), List.of(at));
                }
                case Binary b -> {
                    form.append(b.op()).append('(');
                    PrimExpr x = expr(b.a()), y = expr(b.b());
                    form.append(')');
                    yield new Binary(b.op(), x, y);
                }
                case Unary u -> {
                    form.append(u.op()).append('(');
                    PrimExpr x = expr(u.a());
                    form.append(')');
                    yield new Unary(u.op(), x);
                }
                case Cast c -> {
                    form.append("cast").append(c.dtype()).append(c.saturate()).append(c.roundMode()).append('(');
                    PrimExpr x = expr(c.value());
                    form.append(')');
                    yield c.withValue(x);
                }
                case BitCast c -> {
                    form.append("bitcast").append(c.dtype()).append('(');
                    PrimExpr x = expr(c.value());
                    form.append(')');
                    yield new BitCast(c.dtype(), x);
                }
                case Select s -> {
                    form.append("select(");
                    PrimExpr c = expr(s.condition()), x = expr(s.then()), y = expr(s.otherwise());
                    form.append(')');
                    yield new Select(c, x, y);
                }
                case Call c -> {
                    form.append(c.fn()).append('(');
                    List<PrimExpr> args = new ArrayList<>();
                    for (PrimExpr a : c.args()) args.add(expr(a));
                    form.append(')');
                    yield new Call(c.fn(), args);
                }
                case TensorLoad l -> throw new IllegalStateException("tensor read of " + l.tensor().name() + " survived lowering");
                case Reduce r -> throw new IllegalStateException("reduction survived lowering");
            };
        }
    }
}
