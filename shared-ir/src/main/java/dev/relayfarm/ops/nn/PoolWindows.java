package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
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
}
