package dev.relayfarm.tuning.search;

/**
 * One measured configuration as a cost model sees it: its {@link LoopNestFeatures}, its cost in µs (+∞ for a
 * failure) and its group, the workload it belongs to: costs are only compared within a group, so samples of other
 * workloads (transfer) teach the model what is fast without mixing their scales.
 */
public record CostSample(float[] features, double costUs, String group) {
    public CostSample {
        if (features.length != LoopNestFeatures.length()) {
            throw new IllegalArgumentException("a cost sample needs " + LoopNestFeatures.length() + " features, got " + features.length);
        }
        if (!(costUs > 0)) throw new IllegalArgumentException("a cost must be positive (or +∞ for a failure), got " + costUs);
    }

    public boolean failed() {
        return costUs == Double.POSITIVE_INFINITY;
    }
}
