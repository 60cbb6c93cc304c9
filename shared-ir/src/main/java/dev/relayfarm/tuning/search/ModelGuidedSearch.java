package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A search guided by a learned {@link CostModel} (AutoTVM's XGBTuner): every measurement becomes a training sample
 * (the loop-nest features of the configuration and its cost; failures as +∞), the model is refitted before each
 * batch, and the batch is the untried configurations it predicts fastest, each slot replaced with probability
 * {@code epsilon} by a random untried one (so a wrong model cannot trap the search). The model's candidates come
 * from scoring every configuration when the space is small ({@code exhaustiveLimit}), else from simulated
 * annealing over its predictions: {@code chains} walks that each step change one knob and keep the move if it
 * scores better, or worse with a probability that falls with the temperature, remembering the best untried
 * configurations they pass. Until {@code warmup} configurations have succeeded, batches are random.
 *
 * <p>Configurations that do not lower (invalid for the workload) are never proposed: their features are computed
 * before proposing, and an invalid one is taken out of the space. Samples of other workloads ({@code prior}: records
 * of the same device class) train the model from the first batch on (transfer).
 */
public final class ModelGuidedSearch extends SpaceSearch {
    public static final String NAME = "xgb";

    private final CostModel model;
    private final Options options;
    private final TaskFeatures features;
    private final KnobCoordinates coordinates;
    private final List<CostSample> samples;
    private final int priorSamples;
    /** The task's own successful configurations: index to cost in µs (where the annealing's walks start). */
    private final java.util.Map<Long, Double> succeeded = new java.util.HashMap<>();
    private boolean stale = true;

    /**
     * {@code warmup}: successes before the model is trusted; {@code epsilon}: the chance a slot is random;
     * {@code exhaustiveLimit}: spaces up to this size are scored whole; {@code chains}, {@code steps},
     * {@code patience}: the annealing's walks, their length, and the steps without a new candidate before it stops.
     */
    public record Options(int warmup, double epsilon, long exhaustiveLimit, int chains, int steps, int patience) {
        public static final Options DEFAULT = new Options(8, 0.05, 4096, 32, 100, 20);

        public Options {
            if (warmup < 2 || chains < 1 || steps < 1 || patience < 1) throw new IllegalArgumentException("model-guided search options must be positive (warmup >= 2): " + this);
            if (epsilon < 0 || epsilon > 1) throw new IllegalArgumentException("epsilon must be in [0, 1], got " + epsilon);
        }
    }

    public ModelGuidedSearch(TuningTask task, long seed, CostModel model, Options options, List<CostSample> prior) {
        super(task, seed);
        this.model = model;
        this.options = options;
        this.features = new TaskFeatures(task);
        this.coordinates = new KnobCoordinates(space);
        this.samples = new ArrayList<>(prior);
        this.priorSamples = prior.size();
    }

    public ModelGuidedSearch(TuningTask task, long seed, CostModel model) {
        this(task, seed, model, Options.DEFAULT, List.of());
    }

    @Override
    public String name() {
        return NAME;
    }

    public CostModel model() {
        return model;
    }

    /** The samples this search measured itself (not its prior ones): what a tuner passes on to warm other tasks' models. */
    public List<CostSample> measuredSamples() {
        return List.copyOf(samples.subList(priorSamples, samples.size()));
    }

    @Override
    protected void learn(long index, Measurement m) {
        Optional<float[]> f = index >= 0 ? features.of(index) : features.of(m.config());
        if (f.isEmpty()) return; // it does not lower: nothing to learn beyond never proposing it
        samples.add(new CostSample(f.get(), m.costUs(), task.key()));
        if (m.ok() && index >= 0) succeeded.merge(index, m.costUs(), Math::min);
        stale = true;
    }

    @Override
    protected List<Long> propose(int count) {
        if (stale) {
            model.fit(samples);
            stale = false;
        }
        boolean guided = model.fitted() && (succeeded.size() >= options.warmup() || priorSamples >= options.warmup());
        List<Long> ranked = guided ? (space.size() <= options.exhaustiveLimit() ? scoreAll() : anneal(2 * count)) : List.of();
        Set<Long> batch = new LinkedHashSet<>();
        int next = 0;
        while (batch.size() < count) {
            long pick = -1;
            if (!(random.nextDouble() < options.epsilon())) {
                while (next < ranked.size() && (batch.contains(ranked.get(next)) || isTried(ranked.get(next)))) next++;
                if (next < ranked.size()) pick = ranked.get(next++);
            }
            if (pick < 0) pick = randomValid(batch);
            if (pick < 0) break;
            batch.add(pick);
        }
        return new ArrayList<>(batch);
    }

    /** A random untried configuration that lowers, or -1; those that do not are taken out of the space on the way. */
    private long randomValid(Set<Long> batch) {
        while (true) {
            long i = randomUntried(batch);
            if (i < 0 || features.of(i).isPresent()) return i;
            markTried(i);
        }
    }

    /** Every untried configuration that lowers, predicted fastest first. */
    private List<Long> scoreAll() {
        List<Long> ids = new ArrayList<>();
        List<float[]> xs = new ArrayList<>();
        for (long i = 0; i < space.size(); i++) {
            if (isTried(i)) continue;
            Optional<float[]> f = features.of(i);
            if (f.isEmpty()) {
                markTried(i);
                continue;
            }
            ids.add(i);
            xs.add(f.get());
        }
        return byScore(ids, model.predict(xs));
    }

    private static List<Long> byScore(List<Long> ids, double[] scores) {
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < ids.size(); k++) order.add(k);
        order.sort(Comparator.comparingDouble((Integer k) -> -scores[k]).thenComparing(ids::get));
        return order.stream().map(ids::get).toList();
    }

    /**
     * Up to {@code want} untried configurations that lower, the best-scored the annealing walks passed, fastest
     * first. Walks start at the fastest measured configurations and at random ones.
     */
    private List<Long> anneal(int want) {
        int chains = options.chains();
        long[] at = new long[chains];
        List<Long> best = succeeded.keySet().stream().sorted(Comparator.comparingDouble((Long i) -> succeeded.get(i)).thenComparing(i -> i))
                .limit(chains / 2).toList();
        for (int c = 0; c < chains; c++) {
            long r = c < best.size() ? best.get(c) : randomValid(Set.of());
            at[c] = r < 0 ? best.isEmpty() ? 0 : best.getFirst() : r;
        }
        double[] score = scores(at);
        double spread = spread(score);
        List<Long> ids = new ArrayList<>();
        List<Double> idScores = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        for (int c = 0; c < chains; c++) remember(at[c], score[c], seen, ids, idScores);
        int quiet = 0;
        for (int step = 0; step < options.steps() && quiet < options.patience(); step++) {
            double temperature = 1 - (double) step / options.steps();
            long[] to = new long[chains];
            for (int c = 0; c < chains; c++) {
                long n = coordinates.neighbour(at[c], random);
                to[c] = features.of(n).isPresent() ? n : at[c];
            }
            double[] toScore = scores(to);
            int before = ids.size();
            for (int c = 0; c < chains; c++) {
                double gain = (toScore[c] - score[c]) / spread;
                if (gain >= 0 || random.nextDouble() < Math.exp(gain / Math.max(temperature, 1e-3))) {
                    at[c] = to[c];
                    score[c] = toScore[c];
                }
                remember(to[c], toScore[c], seen, ids, idScores);
            }
            quiet = ids.size() > before ? 0 : quiet + 1;
        }
        List<Long> ranked = byScore(ids, idScores.stream().mapToDouble(Double::doubleValue).toArray());
        return ranked.subList(0, Math.min(want, ranked.size()));
    }

    private void remember(long index, double score, Set<Long> seen, List<Long> ids, List<Double> scores) {
        if (!isTried(index) && seen.add(index)) {
            ids.add(index);
            scores.add(score);
        }
    }

    private double[] scores(long[] indices) {
        List<float[]> xs = new ArrayList<>();
        for (long i : indices) xs.add(features.of(i).orElseThrow());
        return model.predict(xs);
    }

    /** The scale of score differences, so the temperature means the same for any model's score units. */
    private static double spread(double[] s) {
        double mean = 0, var = 0;
        for (double v : s) mean += v / s.length;
        for (double v : s) var += (v - mean) * (v - mean) / s.length;
        return Math.sqrt(var) + 1e-9;
    }
}
