package dev.relayfarm.vta;

/**
 * Element-wise vector op over a micro-op loop on the accumulator buffer: for every step, accumulator entry
 * {@code uop.dst + dst.offset(i0, i1)} becomes {@code op(itself, operand)} lane by lane, where the operand is the
 * sign-extended {@code immediate} when {@code useImmediate}, else accumulator entry {@code uop.src + src.offset(i0, i1)}.
 */
public record Alu(DependencyFlags deps, AluOp op, UopLoop loop, IndexFactors dst, IndexFactors src, boolean useImmediate, int immediate)
        implements Instruction {

    public static Alu withImmediate(DependencyFlags deps, AluOp op, UopLoop loop, IndexFactors dst, int immediate) {
        return new Alu(deps, op, loop, dst, IndexFactors.ZERO, true, immediate);
    }

    public static Alu withTensor(DependencyFlags deps, AluOp op, UopLoop loop, IndexFactors dst, IndexFactors src) {
        return new Alu(deps, op, loop, dst, src, false, 0);
    }
}
