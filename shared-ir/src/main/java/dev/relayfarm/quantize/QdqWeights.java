package dev.relayfarm.quantize;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.passes.FunctionPass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassInfo;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.List;

/**
 * The weight points of an imported QDQ model: a conv2d / dense whose data is a quantize point (a Q → DQ pair the
 * model quantized, see {@code quantize.qdq.QdqPairs}) gets a per-channel weight point on its constant weight, with
 * the scales {@code max|w_c| / 127}. The model's int8 weights came through DequantizeLinear as {@code q · s_c} and
 * were folded into that constant; symmetric per-channel quantizers (ONNX Runtime's, ours) pick
 * {@code s_c = max|w_c| / 127}, so these scales give back the model's integers, and otherwise they requantize within
 * half a level. A conv whose data the model left float stays float.
 */
public final class QdqWeights extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("quantize-qdq-weights", 0, "puts per-channel weight points on the convs / denses a QDQ model quantized");

    public QdqWeights() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        InferResult types = context.types();
        int[] added = {0};
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(pre instanceof Call c) || !QuantizeRules.quantizable(c, types::typeOf) || AnchorScales.dataPoint(c.args().get(0)) == null) return post;
                Call p = (Call) post;
                QuantizeRules.Anchor anchor = QuantizeRules.ANCHORS.get(((Op) c.callee()).name());
                Constant w = (Constant) c.args().get(1);
                double[] t = Calibration.maxAbs(w.data(), anchor.weightChannelAxis());
                float[] s = new float[t.length];
                for (int i = 0; i < s.length; i++) s[i] = (float) (t[i] > 0 ? t[i] / 127 : 1.0 / 127);
                Call point = Annotate.point(w, "weight", 8, anchor.weightChannelAxis(), true);
                Call scaled = new Call(point.callee(), List.of(w, new Constant(NDArray.wrap(DType.FLOAT32, new int[] {s.length}, s))), point.attrs());
                List<Expr> args = new ArrayList<>(p.args());
                args.set(1, scaled);
                added[0]++;
                return new Call(p.callee(), args, p.attrs(), p.typeArgs(), p.span());
            }
        }.rewrite(function.body());
        return added[0] == 0 ? function : function.withBody(body);
    }
}
