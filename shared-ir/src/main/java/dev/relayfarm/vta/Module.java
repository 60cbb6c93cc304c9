package dev.relayfarm.vta;

import java.util.Optional;

/**
 * The three decoupled modules, in pipeline order. Each runs its own instruction queue in program order and meets its
 * neighbours only through {@link DependencyQueue} tokens.
 */
public enum Module {
    LOAD, COMPUTE, STORE;

    /**
     * Which module executes an instruction. Input and weight loads go to the load module so they can run ahead of
     * compute; micro-op and accumulator loads feed compute's own buffers and so execute on compute, as in VTA.
     */
    public static Module executing(Instruction instruction) {
        return switch (instruction) {
            case Load l -> switch (l.buffer()) {
                case INP, WGT -> LOAD;
                case UOP, ACC -> COMPUTE;
            };
            case Store s -> STORE;
            case Gemm g -> COMPUTE;
            case Alu a -> COMPUTE;
            case Finish f -> COMPUTE;
        };
    }

    /** The queue pop_prev_dep takes from; empty for the load module, which has no previous module. */
    public Optional<DependencyQueue> popPrevQueue() {
        return switch (this) {
            case LOAD -> Optional.empty();
            case COMPUTE -> Optional.of(DependencyQueue.LOAD_TO_COMPUTE);
            case STORE -> Optional.of(DependencyQueue.COMPUTE_TO_STORE);
        };
    }

    /** The queue pop_next_dep takes from; empty for the store module, which has no next module. */
    public Optional<DependencyQueue> popNextQueue() {
        return switch (this) {
            case LOAD -> Optional.of(DependencyQueue.COMPUTE_TO_LOAD);
            case COMPUTE -> Optional.of(DependencyQueue.STORE_TO_COMPUTE);
            case STORE -> Optional.empty();
        };
    }

    public Optional<DependencyQueue> pushPrevQueue() {
        return switch (this) {
            case LOAD -> Optional.empty();
            case COMPUTE -> Optional.of(DependencyQueue.COMPUTE_TO_LOAD);
            case STORE -> Optional.of(DependencyQueue.STORE_TO_COMPUTE);
        };
    }

    public Optional<DependencyQueue> pushNextQueue() {
        return switch (this) {
            case LOAD -> Optional.of(DependencyQueue.LOAD_TO_COMPUTE);
            case COMPUTE -> Optional.of(DependencyQueue.COMPUTE_TO_STORE);
            case STORE -> Optional.empty();
        };
    }
}
