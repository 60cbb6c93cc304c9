package dev.relayfarm.kernel.lower;

/**
 * Told of every kernel {@link PrimitiveLowering} lowers (a loop nest built for one configuration), so a
 * test can count lowerings across a whole compile without a mutable global: the observer is bound for
 * the extent of a call with {@link #observing} and seen by the lowerings that call makes on its thread.
 * Outside such a scope lowerings are not observed.
 */
@FunctionalInterface
public interface LoweringObserver {
    void lowered(KernelPlan plan, dev.relayfarm.kernel.template.ScheduleConfig config);

    ScopedValue<LoweringObserver> CURRENT = ScopedValue.newInstance();

    /** {@code body}'s result, with {@code observer} told of every lowering it makes. */
    static <T, X extends Throwable> T observing(LoweringObserver observer, ScopedValue.CallableOp<T, X> body) throws X {
        return ScopedValue.where(CURRENT, observer).call(body);
    }

    /** The observer bound in this scope, or one that ignores lowerings. */
    static LoweringObserver current() {
        return CURRENT.orElse((plan, config) -> {});
    }
}
