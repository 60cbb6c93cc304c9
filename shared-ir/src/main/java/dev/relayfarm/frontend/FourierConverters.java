package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import java.util.List;

/**
 * ONNX Fourier transforms: DFT and STFT as products with constant cosine/sine matrices (the signal
 * length is static, so the transform is a dense layer in float64). The window generators are in
 * SignalConverters.
 *
 * <p>DFT over complex z[n] (n &lt; L, the axis length) with N = dft_length: Y[k] = Σ_{n &lt; min(L, N)}
 * z[n] e^{∓2πi kn/N} (− forward, + inverse, which also divides by N) for k &lt; K, K = N or, when
 * onesided, ⌊N/2⌋ + 1. Zero-padding (N &gt; L) and truncation (N &lt; L) both fall out of building the
 * matrices over n &lt; min(L, N). An inverse onesided DFT is the real inverse of a onesided
 * (Hermitian) spectrum, numpy's irfft, as the current ONNX test data expects.
 */
final class FourierConverters {
    private FourierConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("DFT", FourierConverters::dft);
        b.add("STFT", FourierConverters::stft);
    }

    private static List<Expr> dft(OnnxNode n) {
        TensorType xt = n.inputType(0);
        int rank = xt.rank();
        long axis;
        if (n.opset() < 20) {
            axis = n.attrInt("axis", 1);
        } else {
            axis = n.hasInput(2) ? n.constantInts(2, "axis")[0] : -2;
        }
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank - 1) throw n.unsupported("axis " + axis + " is out of range for a signal of rank " + (rank - 1));
        if (!xt.isStatic()) throw n.unsupported("DFT needs a static input shape, got " + xt);
        int length = xt.staticShape()[(int) axis];
        boolean inverse = n.attrInt("inverse", 0) != 0;
        boolean onesided = n.attrInt("onesided", 0) != 0;
        // An inverse onesided DFT takes the ⌊N/2⌋ + 1 bins of a Hermitian spectrum, so N defaults to 2(L − 1).
        long dftLength = n.hasInput(1) ? n.constantInts(1, "dft_length")[0] : inverse && onesided ? 2L * (length - 1) : length;
        if (dftLength < 1) throw n.unsupported("dft_length must be positive, got " + dftLength);
        if (inverse && onesided) return List.of(inverseReal(n, n.input(0), (int) axis, (int) dftLength));
        return List.of(transform(n, n.input(0), (int) axis, (int) dftLength, inverse, onesided));
    }

    /**
     * The real inverse of a onesided spectrum X[k], k &lt; L (numpy's irfft): the missing bins are the
     * conjugates X[N − k]*, so x[n] = (1/N) Σ_{k ≤ N/2} w_k (Re X[k] cos θ − Im X[k] sin θ), θ = 2πkn/N,
     * w_k = 1 for k = 0 and k = N/2, else 2. Bins beyond L are zero; bins beyond N/2 are ignored.
     * The result has N at the axis and a last dimension of 1.
     */
    private static Expr inverseReal(OnnxNode n, Expr x, int axis, int dftLength) {
        TensorType xt = (TensorType) n.typeOf(x);
        int rank = xt.rank();
        int[] shape = xt.staticShape();
        if (shape[rank - 1] != 2) throw n.unsupported("an inverse onesided DFT needs a complex input (last dimension 2), got " + shape[rank - 1]);
        int length = shape[axis];
        int bins = Math.min(length, dftLength / 2 + 1);
        double[] cos = new double[dftLength * length], sin = new double[dftLength * length];
        for (int t = 0; t < dftLength; t++) {
            for (int f = 0; f < bins; f++) {
                double w = f == 0 || 2 * f == dftLength ? 1 : 2;
                double theta = 2 * Math.PI * ((long) f * t % dftLength) / dftLength;
                cos[t * length + f] = w * Math.cos(theta) / dftLength;
                sin[t * length + f] = -w * Math.sin(theta) / dftLength;
            }
        }
        Expr c = OnnxNode.constant(NDArray.fromDoubles(DType.FLOAT64, new int[] {dftLength, length}, cos));
        Expr s = OnnxNode.constant(NDArray.fromDoubles(DType.FLOAT64, new int[] {dftLength, length}, sin));
        long[] perm = lastPerm(rank, axis);
        Expr xd = QuantConverters.cast(n, x, DType.FLOAT64);
        Expr y = n.call("add", n.call("nn.dense", transpose(n, part(n, xd, 0), perm), c), n.call("nn.dense", transpose(n, part(n, xd, 1), perm), s));
        y = n.call("expand_dims", List.of(transpose(n, y, inversePerm(perm))), "axis", (long) rank - 1, "num_newaxis", 1L);
        return QuantConverters.cast(n, y, xt.dtype());
    }

    /** The permutation of the rank-1 signal dims that moves {@code axis} last. */
    private static long[] lastPerm(int rank, int axis) {
        long[] perm = new long[rank - 1];
        for (int i = 0, j = 0; i < rank - 1; i++) if (i != axis) perm[j++] = i;
        perm[rank - 2] = axis;
        return perm;
    }

    private static long[] inversePerm(long[] perm) {
        long[] back = new long[perm.length];
        for (int i = 0; i < perm.length; i++) back[(int) perm[i]] = i;
        return back;
    }

    /**
     * The DFT of {@code x} [..., L (at axis), ..., 1|2] along {@code axis}; the result has K at the
     * axis and 2 (real, imaginary) last, in x's dtype.
     */
    private static Expr transform(OnnxNode n, Expr x, int axis, int dftLength, boolean inverse, boolean onesided) {
        TensorType xt = (TensorType) n.typeOf(x);
        int rank = xt.rank();
        int[] shape = xt.staticShape();
        int parts = shape[rank - 1];
        if (parts != 1 && parts != 2) throw n.unsupported("the last dimension must be 1 (real) or 2 (complex), got " + parts);
        int length = shape[axis];
        int k = onesided ? dftLength / 2 + 1 : dftLength;
        // cos / sin matrices [K, L]; the inverse scales by 1/N and flips the sign of the sine terms.
        double[] cos = new double[k * length], sin = new double[k * length];
        double scale = inverse ? 1.0 / dftLength : 1.0;
        for (int f = 0; f < k; f++) {
            for (int t = 0; t < Math.min(length, dftLength); t++) {
                double theta = 2 * Math.PI * ((long) f * t % dftLength) / dftLength;
                cos[f * length + t] = Math.cos(theta) * scale;
                sin[f * length + t] = Math.sin(theta) * scale * (inverse ? -1 : 1);
            }
        }
        Expr c = OnnxNode.constant(NDArray.fromDoubles(DType.FLOAT64, new int[] {k, length}, cos));
        Expr s = OnnxNode.constant(NDArray.fromDoubles(DType.FLOAT64, new int[] {k, length}, sin));
        // Move the transformed axis last (dropping the real/imaginary axis): [..., L].
        long[] perm = lastPerm(rank, axis);
        Expr xd = QuantConverters.cast(n, x, DType.FLOAT64);
        Expr re = transpose(n, part(n, xd, 0), perm);
        Expr yr, yi;
        // Forward: yr = re·cos + im·sin, yi = im·cos − re·sin (the sine matrix carries the inverse's sign).
        if (parts == 1) {
            yr = n.call("nn.dense", re, c);
            yi = n.call("negative", n.call("nn.dense", re, s));
        } else {
            Expr im = transpose(n, part(n, xd, 1), perm);
            yr = n.call("add", n.call("nn.dense", re, c), n.call("nn.dense", im, s));
            yi = n.call("subtract", n.call("nn.dense", im, c), n.call("nn.dense", re, s));
        }
        long[] back = inversePerm(perm);
        Expr y = n.call("stack", List.of(new Tuple(List.of(transpose(n, yr, back), transpose(n, yi, back)))), "axis", (long) rank - 1);
        return QuantConverters.cast(n, y, xt.dtype());
    }

    private static Expr part(OnnxNode n, Expr x, int i) {
        return n.call("take", List.of(x, OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {i}))), "axis", -1L, "mode", "fast");
    }

    private static Expr transpose(OnnxNode n, Expr x, long[] perm) {
        for (int i = 0; i < perm.length; i++) if (perm[i] != i) return n.call("transpose", List.of(x), "axes", perm);
        return x;
    }

    /**
     * STFT(signal [B, L, 1|2], frame_step, window?, frame_length?): frames f start at f·step, each
     * frame_length long, weighted by the window, then transformed along the frame axis:
     * [B, frames, K, 2] with frames = ⌊(L − frame_length) / step⌋ + 1.
     */
    private static List<Expr> stft(OnnxNode n) {
        TensorType st = n.inputType(0);
        if (st.rank() != 3 || !st.isStatic()) throw n.unsupported("the signal must be a static [batch, length, 1|2] tensor, got " + st);
        long step = n.constantInts(1, "frame_step")[0];
        long frameLength;
        if (n.hasInput(3)) frameLength = n.constantInts(3, "frame_length")[0];
        else if (n.hasInput(2)) frameLength = n.inputType(2).shape().getFirst().value();
        else throw n.unsupported("either a window or frame_length is required");
        int length = st.staticShape()[1];
        if (step < 1 || frameLength < 1 || frameLength > length) {
            throw n.unsupported("frame_step " + step + " / frame_length " + frameLength + " do not fit a signal of length " + length);
        }
        int frames = (int) ((length - frameLength) / step) + 1;
        long[] idx = new long[frames * (int) frameLength];
        for (int f = 0; f < frames; f++) for (int t = 0; t < frameLength; t++) idx[f * (int) frameLength + t] = f * step + t;
        Expr index = OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {frames, (int) frameLength}, idx));
        Expr framed = n.call("take", List.of(n.input(0), index), "axis", 1L, "mode", "fast"); // [B, frames, fl, c]
        if (n.hasInput(2)) {
            Expr w = n.call("reshape", List.of(n.input(2)), "newshape", new long[] {frameLength, 1});
            framed = n.call("multiply", framed, QuantConverters.cast(n, w, st.dtype()));
        }
        boolean onesided = n.attrInt("onesided", 1) != 0;
        return List.of(transform(n, framed, 2, (int) frameLength, false, onesided));
    }
}
