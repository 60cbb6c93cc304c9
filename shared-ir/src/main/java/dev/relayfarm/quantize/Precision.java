package dev.relayfarm.quantize;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.passes.PassException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The arithmetic a compile job asks for: {@link #FLOAT} (the model's own types) or {@link #INT8} (quantized after
 * type inference, calibrated on {@link #CALIBRATION_INPUTS} seeded uniform [0, 1) inputs: a job uploads a model, not a
 * calibration set, so this is what {@code relayc quantize} does without {@code --calib}).
 */
public enum Precision {
    FLOAT("float"), INT8("int8");

    /** Calibration inputs of a job's int8 quantization: enough for stable min/max and KL thresholds, bounded interpreter time. */
    public static final int CALIBRATION_INPUTS = 16;

    public final String wireName;

    Precision(String wireName) {
        this.wireName = wireName;
    }

    /** {@code float} or {@code int8}; anything else an {@link IllegalArgumentException} naming both. */
    public static Precision parse(String text) {
        for (Precision p : values()) if (p.wireName.equals(text.strip().toLowerCase(Locale.ROOT))) return p;
        throw new IllegalArgumentException("quantize: expected float or int8, got '" + text.strip() + "'");
    }

    /** {@code typed} in this precision: unchanged for float, quantized (KL, per-channel weights, first conv float) for int8. */
    public IRModule apply(IRModule typed) {
        if (this == FLOAT) return typed;
        Function main = typed.main().orElseThrow(() -> new PassException("int8 quantization needs a @main function"));
        QuantizeConfig config = QuantizeConfig.DEFAULT.withCalibSamples(CALIBRATION_INPUTS);
        return Quantizer.quantize(typed, seededInputs(main, CALIBRATION_INPUTS, 0), config).module();
    }

    /** {@code count} sets of seeded uniform [0, 1) inputs for {@code main}, whose parameters must be static float tensors. */
    public static List<List<NDArray>> seededInputs(Function main, int count, long seed) {
        for (Var v : main.params()) {
            if (!(v.annotation() instanceof TensorType t) || !t.dtype().isFloat() || !t.isStatic()) {
                throw new PassException("seeded random inputs need static float tensor inputs; %"
                        + v.name() + " is " + v.annotation() + " (bind its dims with shapes)");
            }
        }
        Random r = new Random(seed);
        List<List<NDArray>> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            List<NDArray> one = new ArrayList<>();
            for (Var v : main.params()) {
                TensorType t = (TensorType) v.annotation();
                NDArray a = NDArray.zeros(t.dtype(), t.shape().stream().mapToInt(d -> (int) d.value()).toArray());
                for (int k = 0; k < a.elementCount(); k++) a.setDouble(k, r.nextDouble());
                one.add(a);
            }
            out.add(one);
        }
        return out;
    }
}
