package dev.relayfarm.train;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.CompiledModel;
import java.util.ArrayList;
import java.util.List;

/**
 * One evaluation of a gradient program ({@code @main(params) -> (loss, (grads...))}): by the reference interpreter, on
 * the program as the gradient pass wrote it (closures, references and all), or natively, on the artifact compiled from
 * its partially evaluated form. Training runs the same steps through either.
 */
public sealed interface GradientStep extends AutoCloseable {
    /** The loss and the gradients at {@code inputs} (every parameter of {@code @main}, in order). */
    Result run(List<NDArray> inputs);

    @Override
    default void close() {}

    record Result(double loss, List<NDArray> grads) {}

    /** The interpreter on {@code gradient} as it is. */
    static GradientStep interpreted(IRModule gradient) {
        return new Interpreted(new Interpreter(gradient));
    }

    /** A compiled artifact of the gradient program (see {@link Training#compile}). */
    static GradientStep compiled(CompiledModel model) {
        return new Compiled(model);
    }

    record Interpreted(Interpreter interpreter) implements GradientStep {
        @Override
        public Result run(List<NDArray> inputs) {
            TupleValue out = (TupleValue) interpreter.call("main", inputs.toArray(NDArray[]::new));
            List<NDArray> grads = new ArrayList<>();
            for (Value g : ((TupleValue) out.get(1)).fields()) grads.add(((TensorValue) g).data());
            return new Result(((TensorValue) out.get(0)).data().getDouble(0), grads);
        }
    }

    record Compiled(CompiledModel model) implements GradientStep {
        @Override
        public Result run(List<NDArray> inputs) {
            List<NDArray> out = model.run(inputs);
            return new Result(out.getFirst().getDouble(0), List.copyOf(out.subList(1, out.size())));
        }

        @Override
        public void close() {
            model.close();
        }
    }
}
