package dev.relayfarm.bench;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/** The reference interpreter on an (optionally optimized) module: the baseline the compiled artifact must beat. */
public record InterpreterRunner(IRModule module) implements ModelRunner {
    @Override
    public String name() {
        return "relayfarm-interp";
    }

    @Override
    public List<NDArray> run(List<NDArray> inputs) {
        return flatten(Interpreter.runMain(module, inputs.toArray(NDArray[]::new)));
    }

    /** Tensor leaves of a result in order: a tuple of outputs becomes the model's output list. */
    static List<NDArray> flatten(Value v) {
        List<NDArray> out = new ArrayList<>();
        Deque<Value> work = new ArrayDeque<>();
        work.push(v);
        while (!work.isEmpty()) {
            switch (work.pop()) {
                case TensorValue(NDArray a) -> out.add(a);
                case TupleValue(List<Value> fields) -> {
                    for (int i = fields.size() - 1; i >= 0; i--) work.push(fields.get(i));
                }
                default -> throw new IllegalStateException("the model returned a value that is not a tensor or tuple: " + v);
            }
        }
        return out;
    }
}
