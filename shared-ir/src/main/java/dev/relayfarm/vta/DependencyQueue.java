package dev.relayfarm.vta;

/**
 * The four token queues between neighbouring modules. A token says "the data you depend on is ready" (forward
 * queues) or "the buffer space you want to overwrite is free again" (backward queues).
 */
public enum DependencyQueue {
    LOAD_TO_COMPUTE(Module.LOAD, Module.COMPUTE),
    COMPUTE_TO_LOAD(Module.COMPUTE, Module.LOAD),
    COMPUTE_TO_STORE(Module.COMPUTE, Module.STORE),
    STORE_TO_COMPUTE(Module.STORE, Module.COMPUTE);

    public final Module from;
    public final Module to;

    DependencyQueue(Module from, Module to) {
        this.from = from;
        this.to = to;
    }

    @Override
    public String toString() {
        return name() + " (" + from.name().toLowerCase() + "→" + to.name().toLowerCase() + ")";
    }
}
