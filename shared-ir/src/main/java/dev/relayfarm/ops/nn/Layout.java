package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain 4-D layout such as {@code NHWC} or {@code HWIO}: a permutation of a canonical one
 * ({@code NCHW} for data, {@code OIHW} or {@code IOHW} for weights). Kernels compute in the canonical
 * layout and permute at the edges, so every permutation works with one fast loop nest; blocked layouts
 * ({@code NCHW4c}) are rejected with a clear message.
 *
 * @param name the layout as written
 * @param pos {@code pos[i]} = where canonical axis {@code i} sits in this layout
 */
public record Layout(String name, int[] pos) {

    public static Layout parse(String op, String key, String name, String canonical) {
        if (name.length() != canonical.length()) throw bad(op, key, name, canonical);
        int[] pos = new int[canonical.length()];
        for (int i = 0; i < canonical.length(); i++) {
            int at = name.indexOf(canonical.charAt(i));
            if (at < 0 || name.lastIndexOf(canonical.charAt(i)) != at) throw bad(op, key, name, canonical);
            pos[i] = at;
        }
        return new Layout(name, pos);
    }

    private static RelationException bad(String op, String key, String name, String canonical) {
        return new RelationException(op + ": " + key + " must be a permutation of " + canonical + ", got \"" + name + "\"");
    }

    public boolean isCanonical() {
        for (int i = 0; i < pos.length; i++) if (pos[i] != i) return false;
        return true;
    }

    /** Dims in this layout → dims in canonical order. */
    public List<Dim> toCanonical(List<Dim> dims) {
        List<Dim> out = new ArrayList<>();
        for (int p : pos) out.add(dims.get(p));
        return out;
    }

    /** Dims in canonical order → dims in this layout. */
    public List<Dim> fromCanonical(List<Dim> canonical) {
        Dim[] out = new Dim[pos.length];
        for (int i = 0; i < pos.length; i++) out[pos[i]] = canonical.get(i);
        return List.of(out);
    }

    public int[] toCanonical(int[] dims) {
        int[] out = new int[pos.length];
        for (int i = 0; i < pos.length; i++) out[i] = dims[pos[i]];
        return out;
    }

    /** Transpose axes taking an array in this layout to canonical order. */
    public int[] toCanonicalAxes() {
        return pos.clone();
    }

    /** Transpose axes taking a canonical-order array to this layout. */
    public int[] fromCanonicalAxes() {
        int[] axes = new int[pos.length];
        for (int i = 0; i < pos.length; i++) axes[pos[i]] = i;
        return axes;
    }
}
