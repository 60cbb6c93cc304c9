package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.RelationException;

/**
 * The output length of one pooled axis, shared by every pooling relation and reference kernel (and so,
 * through the relation's output type, by the TE computes): the one place the window-count rule lives.
 */
public final class PoolWindows {
    private PoolWindows() {}

    /**
     * {@code (in + padBegin + padEnd - dilated + [stride - 1 if ceil]) / stride + 1}, as TVM's Pool2DRel;
     * with ceil_mode the last window must also start inside the input or its leading padding (the ONNX /
     * PyTorch rule), otherwise it would pool nothing but trailing padding and is dropped:
     * {@code in=2, k=1, stride=2, ceil} gives 1, not 2.
     */
    public static long outLength(long in, int k, int stride, int padBegin, int padEnd, int dilation, boolean ceil) {
        int dilated = dilation * (k - 1) + 1;
        long out = Math.floorDiv(in + padBegin + padEnd - dilated + (ceil ? stride - 1 : 0), stride) + 1;
        if (ceil && out > 1 && (out - 1) * stride >= in + padBegin) out--;
        return out;
    }

    /**
     * {@link #outLength} on a dim: exact on a static length; a symbolic one keeps TVM's expression (the
     * ceil_mode correction needs the length, so it is left to run time). Throws, naming {@code what}, when
     * a static length would be non-positive.
     */
    public static Dim outDim(String op, String what, Dim in, int k, int stride, int padBegin, int padEnd, int dilation, boolean ceil) {
        int dilated = dilation * (k - 1) + 1;
        int pad = padBegin + padEnd;
        if (in instanceof Dim.Int(long v)) {
            long out = outLength(v, k, stride, padBegin, padEnd, dilation, ceil);
            if (out <= 0) {
                throw new RelationException(op + ": output " + what + " would be " + out + ": input " + in + " + padding " + pad
                        + " is smaller than the dilated pool window " + dilated);
            }
            return Dim.of(out);
        }
        Dim num = Dims.add(in, Dim.of(pad - dilated + (ceil ? stride - 1 : 0)));
        return Dims.add(Dims.div(num, Dim.of(stride)), Dim.of(1));
    }

    /**
     * Reference pooling over an {@code N, C, spatial...} array with any number of spatial axes
     * ({@code padding} is {begin..., end...}), with {@link Pool2D}'s semantics: max ignores padding and
     * gives the dtype's lowest value for a window with no element; avg divides the sum by the elements
     * inside the input, or with count_include_pad by the positions inside input + padding (never the
     * extra ceil_mode cells). Each output walks its window as a flat index, decoded per axis.
     */
    static NDArray poolNd(NDArray x, int[] k, int[] stride, int[] dil, int[] padding, boolean ceil, boolean countIncludePad, boolean max) {
        int sp = k.length;
        int[] in = new int[sp], out = new int[sp];
        int inPlane = 1, outPlane = 1, window = 1;
        for (int i = 0; i < sp; i++) {
            in[i] = x.dim(2 + i);
            out[i] = (int) Math.max(0, outLength(in[i], k[i], stride[i], padding[i], padding[sp + i], dil[i], ceil));
            inPlane *= in[i];
            outPlane *= out[i];
            window *= k[i];
        }
        int planes = x.dim(0) * x.dim(1);
        int[] shape = new int[2 + sp];
        shape[0] = x.dim(0);
        shape[1] = x.dim(1);
        System.arraycopy(out, 0, shape, 2, sp);
        double[] v = Arrays2.doubles(x);
        double[] res = new double[planes * outPlane];
        double lowest = Pool2D.lowest(x.dtype());
        int inSize = inPlane, outSize = outPlane, win = window;
        Parallel.forEach(planes, (long) res.length * window, p -> {
            int[] start = new int[sp];
            for (int o = 0; o < outSize; o++) {
                int rest = o;
                for (int i = sp - 1; i >= 0; i--) {
                    start[i] = rest % out[i] * stride[i] - padding[i];
                    rest /= out[i];
                }
                double acc = max ? Double.NEGATIVE_INFINITY : 0;
                int valid = 0;
                for (int w = 0; w < win; w++) {
                    int off = 0, r = w;
                    boolean inside = true;
                    for (int i = sp - 1, scale = 1; i >= 0; i--) {
                        int pos = start[i] + r % k[i] * dil[i];
                        r /= k[i];
                        if (pos < 0 || pos >= in[i]) inside = false;
                        off += pos * scale;
                        scale *= in[i];
                    }
                    if (!inside) continue;
                    double e = v[p * inSize + off];
                    acc = max ? Math.max(acc, e) : acc + e;
                    valid++;
                }
                double result;
                if (max) {
                    result = valid == 0 ? lowest : acc;
                } else {
                    int divisor = valid;
                    if (countIncludePad) {
                        // positions inside input + padding: per axis, those not past the end padding
                        divisor = 1;
                        for (int i = 0; i < sp; i++) {
                            int cnt = 0;
                            for (int j = 0; j < k[i]; j++) if (start[i] + j * dil[i] <= in[i] + padding[sp + i] - 1) cnt++;
                            divisor *= cnt;
                        }
                    }
                    result = acc / Math.max(1, divisor);
                }
                res[p * outSize + o] = result;
            }
        });
        return Arrays2.fromDoubles(x.dtype(), shape, res);
    }

    /**
     * What a 2-D average-pool window starting at ({@code y0}, {@code x0}) divides by: the elements inside the input,
     * or with {@code countIncludePad} the positions inside input + padding (never the extra ceil_mode cells); at
     * least 1. The forward kernel and its gradient share it, so they cannot disagree on an edge window.
     */
    static int avgDivisor(int y0, int x0, int kh, int kw, int dh, int dw, int h, int w, int pb, int pr, boolean countIncludePad) {
        int valid = 0, rowsInPad = 0, colsInPad = 0;
        for (int r = 0; r < kh; r++) {
            int ih = y0 + r * dh;
            if (ih <= h + pb - 1) rowsInPad++;
            if (ih >= 0 && ih < h) for (int s = 0; s < kw; s++) if (x0 + s * dw >= 0 && x0 + s * dw < w) valid++;
        }
        for (int s = 0; s < kw; s++) if (x0 + s * dw <= w + pr - 1) colsInPad++;
        return Math.max(1, countIncludePad ? rowsInPad * colsInPad : valid);
    }
}
