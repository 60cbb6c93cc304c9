package dev.relayfarm.vm;

import java.util.List;

/**
 * One function of an {@link Executable}: its parameters arrive in registers {@code 0 .. numParams-1}
 * (a closure's captured values first, then its arguments), and its code uses {@code registerCount}
 * registers in all.
 */
public record VmFunction(String name, int numParams, int registerCount, List<Instruction> code) {
    public VmFunction {
        code = List.copyOf(code);
        if (numParams < 0 || numParams > registerCount) {
            throw new IllegalArgumentException("function " + name + ": " + numParams + " parameters do not fit in " + registerCount + " registers");
        }
    }
}
