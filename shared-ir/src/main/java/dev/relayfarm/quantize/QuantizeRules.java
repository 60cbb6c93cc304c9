package dev.relayfarm.quantize;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Dense;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The per-operator quantization rules, in one place (TVM registers them per operator with
 * {@code register_annotate_function}; here they are data):
 *
 * <ul>
 *   <li>{@link #ANCHORS}: operators computed on integers, with the role of each argument — the data is an
 *       activation (per-tensor scale), the weight a weight (per-channel scale along its output axis 0, OIHW
 *       and dense's [units, K] alike). The result is an int32 accumulator whose scale is
 *       {@code s_data * s_weight[c]} along the output's channel axis.
 *   <li>{@link #TRANSPARENT}: operators that commute with a per-tensor symmetric quantization
 *       ({@code q(relu(x)) = relu(q(x))}, max-pooling and reshaping pick or move values): annotate places a
 *       data quantize point above them, so the requantize happens once where the accumulator ends and they run
 *       on int8.
 *   <li>{@link #EPILOGUE}: operators realize runs on the int32 accumulator itself: a per-channel constant bias
 *       (quantized to the accumulator's scale) and relu.
 * </ul>
 */
public final class QuantizeRules {
    private QuantizeRules() {}

    public enum Role { ACTIVATION, WEIGHT }

    /** The quantized form of an anchor: its arguments' roles and where its output keeps the channel axis. */
    public record Anchor(String op, List<Role> args, int weightChannelAxis) {}

    public static final Map<String, Anchor> ANCHORS = Map.of(
            Conv2D.NAME, new Anchor(Conv2D.NAME, List.of(Role.ACTIVATION, Role.WEIGHT), 0),
            Dense.NAME, new Anchor(Dense.NAME, List.of(Role.ACTIVATION, Role.WEIGHT), 0));

    public static final Set<String> TRANSPARENT = Set.of("nn.relu", "nn.max_pool2d", "reshape", "nn.batch_flatten");

    public static final Set<String> EPILOGUE = Set.of("nn.bias_add", "add", "nn.relu");

    /**
     * Whether {@code call} (an anchor) can be quantized: float32 data, a constant float32 weight, no other output
     * dtype, conv2d in NCHW / OIHW (the channel axes realize assumes), dense on 2-D data.
     */
    public static boolean quantizable(Call call, java.util.function.Function<dev.relayfarm.ir.Expr, Type> typeOf) {
        if (!(call.callee() instanceof Op op) || !ANCHORS.containsKey(op.name())) return false;
        if (!(typeOf.apply(call.args().get(0)) instanceof TensorType data) || !data.dtype().equals(DType.FLOAT32)) return false;
        if (!(call.args().get(1) instanceof Constant w) || !w.data().dtype().equals(DType.FLOAT32)) return false;
        return switch (op.name()) {
            case Conv2D.NAME -> {
                Conv2D.Conv2DAttrs a = (Conv2D.Conv2DAttrs) OpRegistry.get(op.name()).parseAttrs(call.attrs());
                yield a.dataLayout().name().equals("NCHW") && a.kernelLayout().name().equals("OIHW") && a.outLayout().name().equals("NCHW")
                        && (a.outDtype() == null || a.outDtype().equals(DType.FLOAT32));
            }
            case Dense.NAME -> {
                Dense.DenseAttrs a = (Dense.DenseAttrs) OpRegistry.get(op.name()).parseAttrs(call.attrs());
                yield data.rank() == 2 && (a.outDtype() == null || a.outDtype().equals(DType.FLOAT32));
            }
            default -> false;
        };
    }

    /** The channel axis of an anchor's output: 1 for NCHW conv2d, the last for dense. */
    public static int outputChannelAxis(Call call, int outRank) {
        return ((Op) call.callee()).name().equals(Conv2D.NAME) ? 1 : outRank - 1;
    }
}
