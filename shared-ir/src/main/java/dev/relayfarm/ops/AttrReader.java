package dev.relayfarm.ops;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ops.RelationException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads typed values out of generic {@link Attrs} with defaults and clear errors:
 * <pre>{@code
 * AttrReader r = new AttrReader("nn.conv2d", attrs);
 * int[] strides = r.ints("strides", 1, 1);
 * String layout = r.string("data_layout", "NCHW");
 * r.finish(); // rejects keys nobody read: "nn.conv2d: unknown attribute 'stride'"
 * }</pre>
 */
public final class AttrReader {
    private final String op;
    private final Attrs attrs;
    private final Set<String> read = new HashSet<>();

    public AttrReader(String op, Attrs attrs) {
        this.op = op;
        this.attrs = attrs;
    }

    private AttrValue raw(String key) {
        read.add(key);
        AttrValue v = attrs.values().get(key);
        return v instanceof AttrValue.NoneValue ? null : v;
    }

    private RelationException wrong(String key, String expected, AttrValue got) {
        return new RelationException(op + ": attribute '" + key + "' must be " + expected + ", got " + show(got));
    }

    private static String show(AttrValue v) {
        return switch (v) {
            case AttrValue.IntValue i -> Long.toString(i.value());
            case AttrValue.FloatValue f -> Double.toString(f.value());
            case AttrValue.StringValue s -> '"' + s.value() + '"';
            case AttrValue.BoolValue b -> b.value() ? "True" : "False";
            case AttrValue.ListValue l -> l.values().stream().map(AttrReader::show).toList().toString();
            case AttrValue.NoneValue n -> "None";
        };
    }

    public boolean has(String key) {
        return attrs.has(key) && !(attrs.values().get(key) instanceof AttrValue.NoneValue);
    }

    public long integer(String key, long dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        return switch (v) {
            case AttrValue.IntValue i -> i.value();
            case AttrValue.BoolValue b -> b.value() ? 1 : 0;
            case AttrValue.FloatValue f when f.value() == Math.rint(f.value()) -> (long) f.value();
            default -> throw wrong(key, "an integer", v);
        };
    }

    public int int32(String key, int dflt) {
        long v = integer(key, dflt);
        if (v != (int) v) throw wrong(key, "a 32-bit integer", raw(key));
        return (int) v;
    }

    public double real(String key, double dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        return switch (v) {
            case AttrValue.FloatValue f -> f.value();
            case AttrValue.IntValue i -> i.value();
            default -> throw wrong(key, "a number", v);
        };
    }

    public boolean bool(String key, boolean dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        return switch (v) {
            case AttrValue.BoolValue b -> b.value();
            case AttrValue.IntValue i -> i.value() != 0;
            default -> throw wrong(key, "a boolean", v);
        };
    }

    public String string(String key, String dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        if (v instanceof AttrValue.StringValue s) return s.value();
        throw wrong(key, "a string", v);
    }

    /** A dtype attribute; absent or empty string ("") gives {@code dflt} (which may be null). */
    public DType dtype(String key, DType dflt) {
        String s = string(key, null);
        if (s == null || s.isEmpty()) return dflt;
        try {
            return DType.parse(s);
        } catch (IllegalArgumentException e) {
            throw new RelationException(op + ": attribute '" + key + "': " + e.getMessage());
        }
    }

    /** An integer list; a single integer is accepted as a one-element list. Absent gives {@code dflt}. */
    public long[] longs(String key, long... dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        List<AttrValue> items = v instanceof AttrValue.ListValue l ? l.values() : List.of(v);
        long[] out = new long[items.size()];
        for (int i = 0; i < out.length; i++) {
            if (items.get(i) instanceof AttrValue.IntValue iv) out[i] = iv.value();
            else throw wrong(key, "a list of integers", v);
        }
        return out;
    }

    public int[] ints(String key, int... dflt) {
        long[] l = longs(key, (long[]) null);
        if (l == null) return dflt;
        int[] out = new int[l.length];
        for (int i = 0; i < l.length; i++) {
            if (l[i] != (int) l[i]) throw wrong(key, "a list of 32-bit integers", raw(key));
            out[i] = (int) l[i];
        }
        return out;
    }

    /** Like {@link #ints} but absent or None gives null (for "optional axis list" attributes). */
    public int[] optionalInts(String key) {
        return ints(key, (int[]) null);
    }

    public double[] reals(String key, double... dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        List<AttrValue> items = v instanceof AttrValue.ListValue l ? l.values() : List.of(v);
        double[] out = new double[items.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (items.get(i)) {
                case AttrValue.FloatValue f -> f.value();
                case AttrValue.IntValue iv -> iv.value();
                default -> throw wrong(key, "a list of numbers", v);
            };
        }
        return out;
    }

    /** A list of strings; a single string is accepted as a one-element list. Absent gives {@code dflt}. */
    public List<String> strings(String key, List<String> dflt) {
        AttrValue v = raw(key);
        if (v == null) return dflt;
        List<AttrValue> items = v instanceof AttrValue.ListValue l ? l.values() : List.of(v);
        List<String> out = new java.util.ArrayList<>(items.size());
        for (AttrValue item : items) {
            if (item instanceof AttrValue.StringValue s) out.add(s.value());
            else throw wrong(key, "a list of strings", v);
        }
        return List.copyOf(out);
    }

    /** Rejects attributes that no reader asked for (typos must not be ignored silently). */
    public void finish() {
        for (String key : attrs.values().keySet()) {
            if (!read.contains(key)) throw new RelationException(op + ": unknown attribute '" + key + "'");
        }
    }
}
