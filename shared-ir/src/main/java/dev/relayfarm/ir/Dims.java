package dev.relayfarm.ir;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Arithmetic on shape dimensions with simplification, for type relations:
 * constants fold, {@code Any} absorbs ({@code ? + 1 = ?}), and sums of symbolic terms are kept in a
 * canonical linear form ({@code n + n → 2 * n}, {@code (n + 1) - 1 → n}), so that two dimensions
 * that are equal as polynomials print and compare equal. Products of two symbolic terms and
 * divisions that do not divide exactly stay as opaque atoms.
 */
public final class Dims {
    private Dims() {}

    /** A linear form: constant + sum(coefficient * atom), atoms keyed by their printed form. */
    private record Linear(long constant, TreeMap<String, Long> coeffs, Map<String, Dim> atoms) {}

    public static Dim add(Dim a, Dim b) {
        return combine(Dim.BinOp.ADD, a, b);
    }

    public static Dim sub(Dim a, Dim b) {
        return combine(Dim.BinOp.SUB, a, b);
    }

    public static Dim mul(Dim a, Dim b) {
        return combine(Dim.BinOp.MUL, a, b);
    }

    /** Floor division. */
    public static Dim div(Dim a, Dim b) {
        return combine(Dim.BinOp.FLOOR_DIV, a, b);
    }

    /** Floor modulo. */
    public static Dim mod(Dim a, Dim b) {
        return combine(Dim.BinOp.FLOOR_MOD, a, b);
    }

    /** Product of all dims (1 for none). */
    public static Dim product(List<Dim> dims) {
        Dim p = Dim.of(1);
        for (Dim d : dims) p = mul(p, d);
        return p;
    }

    /** Equal as canonical polynomials (Any is not equal to anything, not even Any). */
    public static boolean provablyEqual(Dim a, Dim b) {
        if (a instanceof Dim.Any || b instanceof Dim.Any) return false;
        return simplify(a).equals(simplify(b));
    }

    /** Equal, or undecidable statically because one side is Any (the gradual-typing check). */
    public static boolean compatible(Dim a, Dim b) {
        if (a instanceof Dim.Any || b instanceof Dim.Any) return true;
        // Symbolic dims that differ as polynomials could coincide only for particular symbol values,
        // which we treat as a mismatch.
        return simplify(a).equals(simplify(b));
    }

    /** The canonical form of {@code d}. */
    public static Dim simplify(Dim d) {
        return switch (d) {
            case Dim.Int i -> i;
            case Dim.Sym s -> s;
            case Dim.Any a -> a;
            case Dim.Bin(Dim.BinOp op, Dim l, Dim r) -> combine(op, simplify(l), simplify(r));
        };
    }

    private static Dim combine(Dim.BinOp op, Dim a, Dim b) {
        if (a instanceof Dim.Any || b instanceof Dim.Any) return Dim.ANY;
        if (a instanceof Dim.Int(long x) && b instanceof Dim.Int(long y)) {
            return switch (op) {
                case ADD -> Dim.of(x + y);
                case SUB -> Dim.of(x - y);
                case MUL -> Dim.of(x * y);
                case FLOOR_DIV -> {
                    if (y == 0) throw new ArithmeticException("dimension division by zero");
                    yield Dim.of(Math.floorDiv(x, y));
                }
                case FLOOR_MOD -> {
                    if (y == 0) throw new ArithmeticException("dimension modulo by zero");
                    yield Dim.of(Math.floorMod(x, y));
                }
            };
        }
        Linear la = linear(a);
        Linear lb = linear(b);
        switch (op) {
            case ADD -> {
                return build(sum(la, lb, 1));
            }
            case SUB -> {
                return build(sum(la, lb, -1));
            }
            case MUL -> {
                if (b instanceof Dim.Int(long k)) return build(scale(la, k));
                if (a instanceof Dim.Int(long k)) return build(scale(lb, k));
                return new Dim.Bin(op, a, b); // not linear: kept as an opaque atom
            }
            case FLOOR_DIV -> {
                if (b instanceof Dim.Int(long k) && k != 0 && divisible(la, k)) return build(divide(la, k));
                if (b instanceof Dim.Int(long k) && k == 1) return a;
                return new Dim.Bin(op, a, b); // not linear: kept as an opaque atom
            }
            case FLOOR_MOD -> {
                if (b instanceof Dim.Int(long k) && k != 0 && divisible(la, k)) return Dim.of(0);
                return new Dim.Bin(op, a, b); // not linear: kept as an opaque atom
            }
        }
        throw new IllegalStateException();
    }

    private static Linear linear(Dim d) {
        TreeMap<String, Long> coeffs = new TreeMap<>();
        Map<String, Dim> atoms = new java.util.HashMap<>();
        long constant = 0;
        // Flatten a canonical sum (which we built ourselves) back into terms.
        List<Dim> terms = new ArrayList<>();
        List<Long> signs = new ArrayList<>();
        terms.add(d);
        signs.add(1L);
        for (int i = 0; i < terms.size(); i++) {
            Dim t = terms.get(i);
            long sign = signs.get(i);
            switch (t) {
                case Dim.Int(long v) -> constant += sign * v;
                case Dim.Bin(Dim.BinOp op, Dim l, Dim r) when op == Dim.BinOp.ADD || op == Dim.BinOp.SUB -> {
                    terms.add(l);
                    signs.add(sign);
                    terms.add(r);
                    signs.add(op == Dim.BinOp.ADD ? sign : -sign);
                }
                case Dim.Bin(Dim.BinOp op, Dim l, Dim r) when op == Dim.BinOp.MUL && l instanceof Dim.Int(long k) -> {
                    terms.add(r);
                    signs.add(sign * k);
                }
                default -> {
                    String key = t.toString();
                    atoms.put(key, t);
                    coeffs.merge(key, sign, Long::sum);
                }
            }
        }
        return new Linear(constant, coeffs, atoms);
    }

    private static Linear sum(Linear a, Linear b, long sign) {
        TreeMap<String, Long> coeffs = new TreeMap<>(a.coeffs);
        Map<String, Dim> atoms = new java.util.HashMap<>(a.atoms);
        atoms.putAll(b.atoms);
        b.coeffs.forEach((k, v) -> coeffs.merge(k, sign * v, Long::sum));
        return new Linear(a.constant + sign * b.constant, coeffs, atoms);
    }

    private static Linear scale(Linear a, long k) {
        TreeMap<String, Long> coeffs = new TreeMap<>();
        a.coeffs.forEach((key, v) -> coeffs.put(key, v * k));
        return new Linear(a.constant * k, coeffs, a.atoms);
    }

    private static boolean divisible(Linear a, long k) {
        if (a.constant % k != 0) return false;
        for (long v : a.coeffs.values()) if (v % k != 0) return false;
        return true;
    }

    private static Linear divide(Linear a, long k) {
        TreeMap<String, Long> coeffs = new TreeMap<>();
        a.coeffs.forEach((key, v) -> coeffs.put(key, v / k));
        return new Linear(a.constant / k, coeffs, a.atoms);
    }

    /** Rebuilds {@code 2 * n + m - 3}: terms by name, positive first, constant last. */
    private static Dim build(Linear l) {
        Dim out = null;
        for (Map.Entry<String, Long> e : l.coeffs.entrySet()) {
            long c = e.getValue();
            if (c == 0) continue;
            Dim atom = l.atoms.get(e.getKey());
            Dim term = Math.abs(c) == 1 ? atom : new Dim.Bin(Dim.BinOp.MUL, Dim.of(Math.abs(c)), atom);
            if (out == null) {
                out = c > 0 ? term : new Dim.Bin(Dim.BinOp.MUL, Dim.of(c), atom);
            } else {
                out = new Dim.Bin(c > 0 ? Dim.BinOp.ADD : Dim.BinOp.SUB, out, term);
            }
        }
        if (out == null) return Dim.of(l.constant);
        if (l.constant > 0) return new Dim.Bin(Dim.BinOp.ADD, out, Dim.of(l.constant));
        if (l.constant < 0) return new Dim.Bin(Dim.BinOp.SUB, out, Dim.of(-l.constant));
        return out;
    }
}
