package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.TuningTask;
import java.util.List;

/** The strategies by the names {@code relayc tune --strategy} takes: {@code xgb}, {@code ga}, {@code random}, {@code grid}. */
public final class SearchStrategies {
    public static final List<String> NAMES = List.of(ModelGuidedSearch.NAME, GeneticSearch.NAME, RandomSearch.NAME, GridSearch.NAME);

    private SearchStrategies() {}

    /** Strategy {@code name} for {@code task}; {@code model} guides {@code xgb} (the others ignore it). */
    public static SearchStrategy create(String name, TuningTask task, long seed, CostModel model) {
        return switch (name) {
            case ModelGuidedSearch.NAME -> new ModelGuidedSearch(task, seed, model);
            case GeneticSearch.NAME -> new GeneticSearch(task, seed);
            case RandomSearch.NAME -> new RandomSearch(task, seed);
            case GridSearch.NAME -> new GridSearch(task, seed);
            default -> throw new IllegalArgumentException("unknown search strategy '" + name + "' (strategies: " + String.join(", ", NAMES) + ")");
        };
    }

    /** As {@link #create(String, TuningTask, long, CostModel)} with {@link CostModels#create}'s model for {@code xgb}. */
    public static SearchStrategy create(String name, TuningTask task, long seed) {
        return create(name, task, seed, name.equals(ModelGuidedSearch.NAME) ? CostModels.create(seed) : null);
    }
}
