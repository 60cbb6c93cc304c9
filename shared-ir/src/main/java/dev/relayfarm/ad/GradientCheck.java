package dev.relayfarm.ad;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Checks reverse-mode gradients against central finite differences, both through the reference interpreter.
 * The function's outputs are first contracted with fixed random weights into one scalar,
 * {@code L(x) = sum_k sum(out_k * w_k)}, so that every output element matters with a different weight (the
 * plain sum would hide errors, e.g. the gradient of {@code sum(softmax(x))} is zero whatever the rule says).
 * Then for every floating-point tensor parameter, every element: {@code (L(x + h) - L(x - h)) / 2h}. Run it
 * on float64 programs: with h = 1e-6 the difference quotient is good to about 1e-9.
 */
public final class GradientCheck {
    /** The global holding the contracted scalar; a name the text syntax cannot write, so no user global clashes. */
    static final String OBJECTIVE = "objective$";

    private GradientCheck() {}

    /** One parameter's comparison: {@code ||analytic - numeric|| / max(||analytic||, ||numeric||, 1e-12)} (2-norms). */
    public record ParamError(String param, double relativeError, double maxAbsoluteError, double[] analytic, double[] numeric) {}

    public record Report(List<ParamError> params) {
        public double worstRelativeError() {
            return params.stream().mapToDouble(ParamError::relativeError).max().orElse(0);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            for (ParamError p : params) {
                sb.append(String.format("%%%s: relative error %.3g, max abs error %.3g%n", p.param(), p.relativeError(), p.maxAbsoluteError()));
            }
            return sb.toString();
        }
    }

    /** Checks the gradient of {@code @main} at {@code inputs}, with step {@code h} and contraction weights from {@code seed}. */
    public static Report check(IRModule module, List<NDArray> inputs, double h, long seed) {
        IRModule objective = withObjective(module, seed);
        IRModule grad = ReverseMode.gradient(objective, OBJECTIVE);
        Value result = Interpreter.run(grad, "main", inputs.stream().<Value>map(TensorValue::new).toList());
        TupleValue grads = (TupleValue) ((TupleValue) result).get(1);
        Interpreter interp = new Interpreter(objective);
        List<ParamError> errors = new ArrayList<>();
        Function main = objective.function("main").orElseThrow();
        for (int p = 0; p < inputs.size(); p++) {
            NDArray x = inputs.get(p);
            if (!x.dtype().isFloat()) continue;
            double[] analytic = new double[x.elementCount()];
            NDArray a = ((TensorValue) grads.get(p)).data();
            double[] numeric = new double[x.elementCount()];
            List<NDArray> args = new ArrayList<>(inputs);
            for (int i = 0; i < numeric.length; i++) {
                analytic[i] = a.getDouble(i);
                NDArray plus = x.copy(), minus = x.copy();
                plus.setDouble(i, x.getDouble(i) + h);
                minus.setDouble(i, x.getDouble(i) - h);
                args.set(p, plus);
                double fp = scalar(interp.call(OBJECTIVE, args.toArray(NDArray[]::new)));
                args.set(p, minus);
                double fm = scalar(interp.call(OBJECTIVE, args.toArray(NDArray[]::new)));
                numeric[i] = (fp - fm) / (2 * h);
            }
            double diff = 0, na = 0, nn = 0, maxAbs = 0;
            for (int i = 0; i < numeric.length; i++) {
                double d = analytic[i] - numeric[i];
                diff += d * d;
                na += analytic[i] * analytic[i];
                nn += numeric[i] * numeric[i];
                maxAbs = Math.max(maxAbs, Math.abs(d));
            }
            double rel = Math.sqrt(diff) / Math.max(Math.max(Math.sqrt(na), Math.sqrt(nn)), 1e-12);
            errors.add(new ParamError(main.params().get(p).name(), rel, maxAbs, analytic, numeric));
        }
        return new Report(errors);
    }

    /** {@code module} plus {@code @objective$(params) = sum_k sum(@main(params).k * w_k)}. */
    static IRModule withObjective(IRModule module, long seed) {
        InferResult typed = TypeInference.infer(module);
        GlobalVar mainVar = typed.module().functions().keySet().stream().filter(g -> g.name().equals("main")).findFirst()
                .orElseThrow(() -> new GradientException("gradient check: the module has no @main"));
        FuncType ft = typed.typeOf(mainVar);
        List<Var> params = new ArrayList<>();
        for (int i = 0; i < ft.argTypes().size(); i++) {
            params.add(Var.fresh(typed.module().lookup(mainVar).params().get(i).name(), ft.argTypes().get(i)));
        }
        Var r = Var.fresh("r");
        List<Expr> terms = new ArrayList<>();
        contract(r, ft.retType(), new SplittableRandom(seed), terms);
        if (terms.isEmpty()) throw new GradientException("gradient check: @main has no floating-point output to differentiate");
        Expr total = terms.getFirst();
        for (int i = 1; i < terms.size(); i++) total = Grads.call("add", total, terms.get(i));
        Expr body = new Let(r, new Call(mainVar, new ArrayList<>(params)), total);
        Map<GlobalVar, Function> functions = new LinkedHashMap<>(typed.module().functions());
        functions.put(new GlobalVar(OBJECTIVE), new Function(params, body));
        return TypeInference.infer(IRModule.of(functions, typed.module().types())).module();
    }

    private static void contract(Expr value, Type t, SplittableRandom random, List<Expr> terms) {
        switch (t) {
            case TensorType tt when tt.dtype().isFloat() -> {
                int[] shape = java.util.Arrays.stream(Grads.staticShape(tt, "gradient check")).mapToInt(Math::toIntExact).toArray();
                double[] w = new double[NDArray.elementCount(tt.dtype(), shape)];
                for (int i = 0; i < w.length; i++) w[i] = random.nextDouble(0.5, 1.5) * (random.nextBoolean() ? 1 : -1);
                Constant weights = new Constant(NDArray.fromDoubles(tt.dtype(), shape, w));
                terms.add(Grads.call("sum", Grads.call("multiply", value, weights)));
            }
            case TupleType tu -> {
                for (int i = 0; i < tu.fields().size(); i++) contract(new TupleGetItem(value, i), tu.fields().get(i), random, terms);
            }
            default -> { } // integer and boolean outputs carry no gradient
        }
    }

    private static double scalar(Value v) {
        return ((TensorValue) v).data().getDouble(0);
    }

    /** Seeded uniform inputs in [lo, hi) of the given type (float64 for gradient checks). */
    public static NDArray uniform(TensorType type, double lo, double hi, long seed) {
        int[] shape = java.util.Arrays.stream(Grads.staticShape(type, "gradient check")).mapToInt(Math::toIntExact).toArray();
        SplittableRandom random = new SplittableRandom(seed);
        double[] d = new double[NDArray.elementCount(type.dtype(), shape)];
        for (int i = 0; i < d.length; i++) d[i] = random.nextDouble(lo, hi);
        return NDArray.fromDoubles(type.dtype(), shape, d);
    }
}
