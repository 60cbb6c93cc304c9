package dev.relayfarm.tuning.search;

/**
 * The cost model a search gets: XGBoost where its native library loads, else the pure-Java {@link RidgeCostModel},
 * with the reason logged once (a tuner still runs everywhere, only less well guided).
 */
public final class CostModels {
    private static final System.Logger LOG = System.getLogger("tuning.search");
    private static volatile boolean warned;

    private CostModels() {}

    public static CostModel create(long seed) {
        var error = XgbCostModel.loadError();
        if (error.isEmpty()) return new XgbCostModel(seed);
        if (!warned) {
            warned = true;
            LOG.log(System.Logger.Level.WARNING, "xgboost cannot load here (" + error.get() + "); the cost model falls back to ridge regression");
        }
        return new RidgeCostModel();
    }
}
