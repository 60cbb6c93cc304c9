package dev.relayfarm.tuning.search;

import java.util.List;

/**
 * Predicts which configurations run fastest from their {@link LoopNestFeatures}, trained on measured ones. Only the
 * order of the scores matters (a rank objective): a model is judged by whether it puts the fast configurations
 * first, not by how many µs it guesses.
 */
public interface CostModel {
    /** What it is, for logs and reports ({@code xgboost rank:pairwise}, {@code ridge}). */
    String name();

    /**
     * Trains on every sample so far (the caller passes all of them each round); an implementation may start from
     * its previous fit (warm), but the result must reflect all the samples.
     */
    void fit(List<CostSample> samples);

    /** Whether {@link #fit} has seen enough to predict (at least two successful samples of one group). */
    boolean fitted();

    /** A score per feature vector, higher = predicted faster; comparable within one call only. */
    double[] predict(List<float[]> features);
}
