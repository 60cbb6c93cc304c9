package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;

/** Real tuning tasks for the search tests: a convolution and dense layers, as the optimizer leaves them. */
final class SearchTasks {
    /** A 3x3 convolution whose output (48 channels, 30 columns) has many divisors: a space of a few hundred configs. */
    static final String CONV = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 16, 30, 30), float32], %w: Tensor[(48, 16, 3, 3), float32]) {
              nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=48, kernel_size=[3, 3]))
            }
            """;
    /** Two dense layers of different shapes (batch 8: the packed template). */
    static final String DENSE = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(8, 64), float32], %w1: Tensor[(96, 64), float32], %w2: Tensor[(40, 96), float32]) {
              nn.dense(nn.relu(nn.dense(%x, %w1, units=96)), %w2, units=40)
            }
            """;

    private SearchTasks() {}

    /** The convolution's task (the first one with the largest space). */
    static TuningTask conv() {
        return TuningModels.tasks(CONV, 1).stream().max(java.util.Comparator.comparingLong(t -> t.space().size())).orElseThrow();
    }
}
