package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A genetic search (AutoTVM's GATuner): the population is the fastest configurations measured so far; a child is
 * one of two parents picked with probability proportional to their throughput, in half the cases crossed with the
 * other (each knob from either: uniform crossover; tile knobs interact, so crossing every time mostly breaks good
 * tiles), then each knob moves to a random candidate with probability {@code mutation}, and a child that is still a
 * parent moves one knob (a local step around the fast ones); with probability
 * {@code epsilon} a child is instead a random untried configuration (exploration). A child already tried is bred
 * again, a bounded number of times, then replaced by a random one. Failures never become parents. Until something
 * has been measured, children are random.
 */
public final class GeneticSearch extends SpaceSearch {
    public static final String NAME = "ga";
    /** Breeding attempts per child before it is replaced by a random untried configuration. */
    private static final int ATTEMPTS = 32;

    private final int population;
    private final double mutation, epsilon;
    private final KnobCoordinates coordinates;
    /** Measured configurations that succeeded: index to cost in µs. */
    private final Map<Long, Double> costs = new HashMap<>();

    public GeneticSearch(TuningTask task, long seed, Options options) {
        super(task, seed);
        this.population = options.population();
        this.mutation = options.mutation();
        this.epsilon = options.epsilon();
        this.coordinates = new KnobCoordinates(space);
    }

    public GeneticSearch(TuningTask task, long seed) {
        this(task, seed, Options.DEFAULT);
    }

    /**
     * The parents kept ({@code population}: the fastest so far; small, because tuning budgets are a few hundred
     * trials and a large population of barely-measured configurations breeds like random search), the per-knob
     * mutation probability and the exploration rate.
     */
    public record Options(int population, double mutation, double epsilon) {
        public static final Options DEFAULT = new Options(16, 0.3, 0.05);

        public Options {
            if (population < 2) throw new IllegalArgumentException("a population needs at least 2 parents, got " + population);
            if (mutation < 0 || mutation > 1 || epsilon < 0 || epsilon > 1) throw new IllegalArgumentException("probabilities must be in [0, 1]");
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    protected void learn(long index, Measurement m) {
        if (index >= 0 && m.ok()) costs.put(index, m.costUs());
    }

    @Override
    protected List<Long> propose(int count) {
        List<Long> parents = costs.keySet().stream().sorted(Comparator.comparingDouble((Long i) -> costs.get(i)).thenComparing(i -> i)).limit(population).toList();
        double[] cumulative = new double[parents.size()];
        double sum = 0;
        for (int p = 0; p < parents.size(); p++) cumulative[p] = sum += 1 / costs.get(parents.get(p));
        Set<Long> batch = new HashSet<>();
        List<Long> out = new ArrayList<>();
        while (out.size() < count) {
            long child = parents.isEmpty() || random.nextDouble() < epsilon ? -1 : breed(parents, cumulative, batch);
            if (child < 0) child = randomUntried(batch);
            if (child < 0) break;
            batch.add(child);
            out.add(child);
        }
        return out;
    }

    private long breed(List<Long> parents, double[] cumulative, Set<Long> batch) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            long a = parents.get(pick(cumulative)), b = parents.get(pick(cumulative));
            int[] x = coordinates.of(a), y = coordinates.of(b);
            if (random.nextBoolean()) for (int k = 0; k < x.length; k++) if (random.nextBoolean()) x[k] = y[k];
            coordinates.mutate(x, mutation, random);
            long child = coordinates.index(x);
            // a child equal to a parent would be a wasted attempt: step one knob away from it instead
            if (child == a || child == b) child = coordinates.neighbour(child, random);
            if (!isTried(child) && !batch.contains(child)) return child;
        }
        return -1;
    }

    /** A parent position, with probability proportional to its throughput. */
    private int pick(double[] cumulative) {
        double u = random.nextDouble() * cumulative[cumulative.length - 1];
        for (int p = 0; p < cumulative.length; p++) if (u < cumulative[p]) return p;
        return cumulative.length - 1;
    }
}
