package dev.relayfarm.quantize;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.passes.PassException;
import java.util.ArrayList;
import java.util.List;

/**
 * What calibration decided for one anchor (conv2d / dense) of a calibrated module, read back from its points, so a
 * consumer outside the quantize passes (the QDQ exporter) uses the very scales {@link Realize} turns into integers
 * instead of calibrating again. Anchors are listed per operator in post-order of {@code @main}, the numbering
 * {@link QuantizeConfig#skipConvLayers()} uses; an anchor the config skipped or the rules refused is listed with
 * {@code quantized == false} and no scales.
 *
 * @param op            {@code nn.conv2d} or {@code nn.dense}
 * @param index         its number among the anchors of {@code op}
 * @param quantized     whether it has a weight point (and so runs on integers once realized)
 * @param dataScale     the per-tensor scale of its data point
 * @param dataUnsigned  whether that point is unsigned ([0, 2^nbit - 1]: it moved over a relu)
 * @param dataQmax      the data point's largest level (127 or 255 for 8 bits)
 * @param weightScales  the weight point's scales, one per output channel (axis 0 of OIHW / [units, K]) or one
 * @param weightQmax    the weight point's largest level (127 for 8 bits)
 * @param weight        the float weight as the module holds it (OIHW for conv2d, [units, K] for dense)
 */
public record AnchorScales(String op, int index, boolean quantized, double dataScale, boolean dataUnsigned, long dataQmax,
                           double[] weightScales, long weightQmax, NDArray weight) {

    /** The anchors of {@code calibrated}'s {@code @main} (the module of {@link Calibration.Result#module()}). */
    public static List<AnchorScales> read(IRModule calibrated) {
        List<AnchorScales> out = new ArrayList<>();
        int convs = 0, denses = 0;
        for (Expr e : ExprTraversal.postOrder(calibrated.main().orElseThrow(() -> new PassException("no @main")).body())) {
            if (!(e instanceof Call c && c.callee() instanceof Op op && QuantizeRules.ANCHORS.containsKey(op.name()))) continue;
            int index = op.name().equals(dev.relayfarm.ops.nn.Conv2D.NAME) ? convs++ : denses++;
            Expr w = c.args().get(1);
            if (!Annotate.isPoint(w)) {
                out.add(new AnchorScales(op.name(), index, false, 0, false, 0, new double[0], 0, w instanceof Constant k ? k.data() : null));
                continue;
            }
            Call wp = (Call) w;
            Call dp = dataPoint(c.args().get(0));
            if (dp == null) throw new PassException("anchor " + op.name() + " #" + index + " has a weight point but no data point under it");
            SimulatedQuantize.Attributes da = Calibration.attrs(dp), wa = Calibration.attrs(wp);
            double[] ws = scales(wp);
            if (!(wp.args().get(0) instanceof Constant weight)) throw new PassException("anchor " + op.name() + " #" + index + ": its weight is not a constant");
            out.add(new AnchorScales(op.name(), index, true, scales(dp)[0], !da.sign(), da.qmax(), ws, wa.qmax(), weight.data()));
        }
        return out;
    }

    /** The data point of an anchor: its argument, or below the transparent operators Annotate moved it over. */
    static Call dataPoint(Expr data) {
        Expr e = data;
        while (e instanceof Call c) {
            if (Annotate.isPoint(c)) return c;
            if (!(c.callee() instanceof Op op) || !QuantizeRules.TRANSPARENT.contains(op.name()) || c.args().isEmpty()) return null;
            e = c.args().get(0);
        }
        return null;
    }

    private static double[] scales(Call point) {
        if (!(point.args().get(1) instanceof Constant s)) throw new PassException("a point's scale is not a constant (not calibrated?): " + point);
        double[] d = new double[s.data().elementCount()];
        for (int i = 0; i < d.length; i++) d[i] = s.data().getDouble(i);
        for (double v : d) if (!(v > 0)) throw new PassException("a point is not calibrated (scale " + v + ")");
        return d;
    }
}
