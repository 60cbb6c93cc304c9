package dev.relayfarm.quantize;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.passes.PassException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-point sensitivity for mixed precision: how much quantizing one activation point alone (every other point and
 * every weight left float) changes {@code @main}'s outputs on the calibration inputs, as the mean over inputs of
 * {@code ||q - f||^2 / ||f||^2}. The points that disturb the output most are the ones worth more bits; measuring them
 * one at a time is the usual first-order ranking (the errors of separate points add up roughly independently).
 *
 * <p>Cost: one interpreter run per (point, input), on at most {@link #INPUTS} inputs: for ppocr_cls's 50 points
 * about half a minute.
 */
final class Sensitivity {
    /** At most this many calibration inputs are used: the ranking of the top points is stable well before that. */
    static final int INPUTS = 16;

    private Sensitivity() {}

    /**
     * {@code points} (activation points of the annotated, uncalibrated {@code main}) ordered from the most to the
     * least disturbing, each quantized alone with its scale in {@code scales}.
     */
    static List<Call> rank(IRModule annotated, Function main, List<Call> points, Map<Call, Constant> scales, List<List<NDArray>> inputs) {
        List<List<NDArray>> used = inputs.subList(0, Math.min(INPUTS, inputs.size()));
        // the annotated module's points all have zero scales: it computes what the float model computes
        Interpreter reference = new Interpreter(annotated);
        List<List<NDArray>> want = new ArrayList<>();
        for (List<NDArray> in : used) want.add(outputs(reference.call("main", in.toArray(new NDArray[0]))));
        Map<Call, Double> error = new IdentityHashMap<>();
        for (Call p : points) {
            Interpreter alone = new Interpreter(Calibration.withPoints(annotated, main, (pre, post) -> pre == p
                    ? new Call(post.callee(), List.of(post.args().get(0), scales.get(p)), post.attrs(), post.typeArgs(), post.span())
                    : post));
            double sum = 0;
            for (int i = 0; i < used.size(); i++) sum += relativeError(outputs(alone.call("main", used.get(i).toArray(new NDArray[0]))), want.get(i));
            error.put(p, used.isEmpty() ? 0 : sum / used.size());
        }
        List<Call> ranked = new ArrayList<>(points);
        ranked.sort(Comparator.comparingDouble((Call p) -> error.get(p)).reversed());
        return ranked;
    }

    private static double relativeError(List<NDArray> got, List<NDArray> want) {
        double num = 0, den = 0;
        for (int t = 0; t < want.size(); t++) {
            NDArray g = got.get(t), w = want.get(t);
            for (int i = 0; i < w.elementCount(); i++) {
                double d = g.getDouble(i) - w.getDouble(i);
                num += d * d;
                den += w.getDouble(i) * w.getDouble(i);
            }
        }
        return den == 0 ? num : num / den;
    }

    /** The tensors of a result, a tuple's fields in order (nested tuples flattened). */
    private static List<NDArray> outputs(Value v) {
        List<NDArray> out = new ArrayList<>();
        List<Value> stack = new ArrayList<>(List.of(v));
        while (!stack.isEmpty()) {
            Value x = stack.removeLast();
            switch (x) {
                case TensorValue t -> out.add(t.data());
                case TupleValue t -> {
                    for (int i = t.fields().size() - 1; i >= 0; i--) stack.add(t.fields().get(i));
                }
                default -> throw new PassException("mixed precision ranks points by tensor outputs; @main returned " + x);
            }
        }
        return out;
    }
}
