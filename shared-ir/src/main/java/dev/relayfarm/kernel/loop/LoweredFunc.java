package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.Buffer;
import java.util.List;

/**
 * A kernel after lowering: its parameters (inputs then outputs, the order of the C ABI) and its body.
 */
public record LoweredFunc(String name, List<Buffer> params, int numInputs, Stmt body) {
    public LoweredFunc {
        params = List.copyOf(params);
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) throw new IllegalArgumentException("kernel name must be a C identifier, got '" + name + "'");
    }
}
