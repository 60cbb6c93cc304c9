package dev.relayfarm.tuning.measure;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a candidate's outputs match the reference's (the task's default config on the same seeded inputs), with
 * {@link Tolerance}'s rule {@code |actual - expected| <= atol + rtol * |expected|} per element (NaN matches NaN,
 * integers and bools exactly), and an {@code atol} scaled to the output.
 *
 * <p>Why scaled: configs reorder float sums (split reductions, vector lanes, FMA contraction), so an element whose
 * terms cancel to near 0 carries an absolute error of about K·ε·max|term|, far above a fixed 1e-7, while its
 * relative error is unbounded. The error of a reordered sum is bounded relative to the magnitudes involved, and the
 * output's largest magnitude stands for them: {@code atol = 1e-4 × max|expected|} (float32's ε is 6e-8, so this
 * leaves room for reductions of over a thousand terms) plus {@code rtol = 1e-3} (ONNX's). A wrong index, a missed
 * accumulation or an element never written (still NaN) is off by the order of the output itself and fails.
 */
final class OutputCheck {
    /** ONNX's relative tolerance, as the conformance checks use it. */
    static final double RTOL = Tolerance.ONNX_DEFAULT.rtol();
    static final double ATOL_SCALE = 1e-4;

    private OutputCheck() {}

    /** {@code bytes} (the outputs, back to back, as the driver writes them) split into arrays by {@code signature}. */
    static List<NDArray> decode(KernelSignature signature, byte[] bytes) {
        long expected = signature.outputs().stream().mapToLong(TensorSpec::byteSize).sum();
        if (bytes.length != expected) throw new IllegalArgumentException("outputs of " + signature.name() + " are " + expected + " bytes, the file has " + bytes.length);
        List<NDArray> out = new ArrayList<>();
        int at = 0;
        for (TensorSpec o : signature.outputs()) {
            int n = Math.toIntExact(o.byteSize());
            byte[] part = new byte[n];
            System.arraycopy(bytes, at, part, 0, n);
            at += n;
            out.add(NDArray.fromBytes(o.dtype(), o.shapeArray(), part));
        }
        return out;
    }

    /** How the first differing output differs, or empty when all match. */
    static Optional<String> compare(KernelSignature signature, List<NDArray> actual, List<NDArray> expected) {
        for (int i = 0; i < expected.size(); i++) {
            NDArray e = expected.get(i);
            Optional<Tolerance.Mismatch> m = tolerance(e).compare(actual.get(i), e);
            if (m.isPresent()) return Optional.of("output " + signature.outputs().get(i).name() + ": " + m.get().message());
        }
        return Optional.empty();
    }

    static Tolerance tolerance(NDArray expected) {
        double max = 0;
        if (expected.dtype().isFloat()) {
            for (int i = 0, n = expected.elementCount(); i < n; i++) {
                double v = Math.abs(expected.getDouble(i));
                if (Double.isFinite(v) && v > max) max = v;
            }
        }
        return new Tolerance(RTOL, Tolerance.ONNX_DEFAULT.atol() + ATOL_SCALE * max);
    }
}
