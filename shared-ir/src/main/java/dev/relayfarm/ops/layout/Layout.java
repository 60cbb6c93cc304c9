package dev.relayfarm.ops.layout;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A TVM layout string as data: {@code NCHW}, {@code NHWC}, {@code NCHW8c}, {@code OIHW8i8o},
 * {@code HWIO}. Upper-case letters are primal axes; {@code 8c} is a sub-ordinate axis of 8 elements
 * split off primal {@code C} (which then counts blocks of 8). Each primal axis appears once and has at
 * most one sub-axis, written anywhere after or before it. Layouts describe what the axes of a tensor
 * mean; {@link #convertShape} is the shape half of {@code layout_transform} between two of them.
 *
 * <pre>
 * Layout.parse("NCHW8c").axes()            = [N, C, H, W, 8c]
 * Layout.parse("NCHW").blocked('C', 8)     = NCHW8c
 * convertShape(NCHW, (1, 16, 5, 5), NCHW8c) = (1, 2, 5, 5, 8)
 * </pre>
 *
 * @param name the layout as written (its identity: two layouts are equal when their names are)
 * @param axes the axes in order
 */
public record Layout(String name, List<Axis> axes) {
    /** A primal axis ({@code factor == 0}) or a sub-ordinate axis of {@code factor} elements of {@code primal}. */
    public record Axis(char primal, int factor) {
        public boolean isPrimal() {
            return factor == 0;
        }

        @Override
        public String toString() {
            return isPrimal() ? String.valueOf(primal) : factor + String.valueOf(Character.toLowerCase(primal));
        }
    }

    public Layout {
        axes = List.copyOf(axes);
    }

    /** Parses {@code text}; throws {@link IllegalArgumentException} saying what is wrong and where. */
    public static Layout parse(String text) {
        List<Axis> axes = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                axes.add(new Axis(c, 0));
                i++;
                continue;
            }
            int start = i;
            while (i < text.length() && Character.isDigit(text.charAt(i))) i++;
            if (start == i || i >= text.length() || text.charAt(i) < 'a' || text.charAt(i) > 'z') {
                throw new IllegalArgumentException("bad layout \"" + text + "\": expected an upper-case axis or a block like 8c at position " + start);
            }
            long factor = Long.parseLong(text.substring(start, Math.min(i, start + 10)));
            if (factor <= 0 || i - start > 9) throw new IllegalArgumentException("bad layout \"" + text + "\": block size must be in [1, 999999999]");
            axes.add(new Axis(Character.toUpperCase(text.charAt(i)), (int) factor));
            i++;
        }
        Map<String, Boolean> seen = new HashMap<>();
        for (Axis ax : axes) {
            String key = ax.primal() + (ax.isPrimal() ? "" : "sub");
            if (seen.put(key, true) != null) {
                throw new IllegalArgumentException("bad layout \"" + text + "\": " + (ax.isPrimal() ? "axis " : "a block of axis ") + ax.primal() + " appears twice");
            }
        }
        for (Axis ax : axes) {
            if (!ax.isPrimal() && !seen.containsKey(String.valueOf(ax.primal()))) {
                throw new IllegalArgumentException("bad layout \"" + text + "\": block " + ax + " has no primal axis " + ax.primal());
            }
        }
        return new Layout(text, axes);
    }

    public int rank() {
        return axes.size();
    }

    /** Position of primal axis {@code primal}, or -1. */
    public int indexOf(char primal) {
        for (int i = 0; i < axes.size(); i++) if (axes.get(i).isPrimal() && axes.get(i).primal() == primal) return i;
        return -1;
    }

    /** Position of the sub-axis of {@code primal}, or -1 when it is not split. */
    public int subIndexOf(char primal) {
        for (int i = 0; i < axes.size(); i++) if (!axes.get(i).isPrimal() && axes.get(i).primal() == primal) return i;
        return -1;
    }

    /** Block size of {@code primal}'s sub-axis, 0 when it is not split. */
    public int factorOf(char primal) {
        int i = subIndexOf(primal);
        return i < 0 ? 0 : axes.get(i).factor();
    }

    public boolean isBlocked() {
        return axes.stream().anyMatch(a -> !a.isPrimal());
    }

    /** The primal axes in order, without sub-axes: {@code NCHW8c -> NCHW}. */
    public Layout primal() {
        StringBuilder sb = new StringBuilder();
        for (Axis a : axes) if (a.isPrimal()) sb.append(a.primal());
        return parse(sb.toString());
    }

    /** The primal axis letters, sorted: what must agree between two layouts of the same tensor. */
    public String primalSet() {
        StringBuilder sb = new StringBuilder();
        axes.stream().filter(Axis::isPrimal).map(Axis::primal).sorted().forEach(sb::append);
        return sb.toString();
    }

    /** This layout with {@code primal} split into blocks of {@code factor} appended last ({@code NCHW -> NCHW8c}). */
    public Layout blocked(char primal, int factor) {
        if (indexOf(primal) < 0) throw new IllegalArgumentException("layout " + name + " has no axis " + primal);
        if (subIndexOf(primal) >= 0) throw new IllegalArgumentException("layout " + name + " already splits axis " + primal);
        return parse(name + factor + Character.toLowerCase(primal));
    }

    /** This layout with the sub-axis of {@code primal} (if any) set to {@code factor}: {@code NCHW8c.withFactor('C', 1) = NCHW1c}. */
    public Layout withFactor(char primal, int factor) {
        int at = subIndexOf(primal);
        if (at < 0) return this;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < axes.size(); i++) sb.append(i == at ? new Axis(primal, factor) : axes.get(i));
        return parse(sb.toString());
    }

    /**
     * Whether {@code layout_transform} can go straight from this layout to {@code other}: the same
     * primal axes, and where both split an axis the block sizes nest.
     */
    public boolean canTransformTo(Layout other) {
        if (!primalSet().equals(other.primalSet())) return false;
        for (Axis a : axes) {
            if (a.isPrimal()) continue;
            int f = other.factorOf(a.primal());
            if (f != 0 && Math.max(f, a.factor()) % Math.min(f, a.factor()) != 0) return false;
        }
        return true;
    }

    /**
     * The shape of a tensor of shape {@code dims} in layout {@code from} once transformed to layout
     * {@code to}. Throws {@link IllegalArgumentException} when the rank does not match {@code from},
     * a sub-axis has the wrong size, the primal axes differ, or a static dim does not divide into
     * the blocks of {@code to}.
     */
    public static List<Dim> convertShape(Layout from, List<Dim> dims, Layout to) {
        if (dims.size() != from.rank()) {
            throw new IllegalArgumentException("shape of rank " + dims.size() + " does not fit layout " + from.name() + " of rank " + from.rank());
        }
        if (!from.primalSet().equals(to.primalSet())) {
            throw new IllegalArgumentException(from.name() + " and " + to.name() + " must have the same primal axes");
        }
        Map<Character, Dim> total = new HashMap<>();
        for (int i = 0; i < dims.size(); i++) {
            Axis a = from.axes().get(i);
            Dim d = dims.get(i);
            if (!a.isPrimal()) {
                if (d.isStatic() && d.value() != a.factor()) {
                    throw new IllegalArgumentException("block axis " + a + " of " + from.name() + " has size " + d);
                }
                continue;
            }
            int g = from.factorOf(a.primal());
            total.put(a.primal(), g == 0 ? d : Dims.mul(d, Dim.of(g)));
        }
        List<Dim> out = new ArrayList<>();
        for (Axis a : to.axes()) {
            if (!a.isPrimal()) {
                out.add(Dim.of(a.factor()));
                continue;
            }
            Dim t = total.get(a.primal());
            int f = to.factorOf(a.primal());
            if (f == 0) {
                out.add(t);
            } else {
                if (t.isStatic() && t.value() % f != 0) {
                    throw new IllegalArgumentException("axis " + a.primal() + " of size " + t + " does not divide into blocks of " + f + " for " + to.name());
                }
                out.add(Dims.div(t, Dim.of(f)));
            }
        }
        return out;
    }

    /** The full extent of {@code primal} in a shape of this layout (outer dim times block), or null if absent. */
    public Dim extent(List<Dim> dims, char primal) {
        int i = indexOf(primal);
        if (i < 0) return null;
        int f = factorOf(primal);
        return f == 0 ? dims.get(i) : Dims.mul(dims.get(i), Dim.of(f));
    }

    @Override
    public String toString() {
        return name;
    }
}
