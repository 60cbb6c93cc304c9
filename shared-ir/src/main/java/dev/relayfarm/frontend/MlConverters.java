package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.List;

/**
 * Operators of the {@code ai.onnx.ml} domain: Binarizer, ArrayFeatureExtractor, TreeEnsemble, Scaler, Normalizer,
 * Imputer and OneHotEncoder over numeric tensors, each static dataflow of existing Relay operators, so it compiles
 * like the rest (OneHotEncoder also over strings, in the interpreter); and LabelEncoder, one
 * {@code label_encoder} call with constant tables (interpreter only when strings are involved).
 */
final class MlConverters {
    private MlConverters() {}

    private static final String ML = "ai.onnx.ml.";

    static void register(OnnxConverters.Builder b) {
        b.add(ML + "Binarizer", n -> {
            Expr x = n.input(0);
            Expr above = n.call("greater", x, MathConverters.scalar(n, x, n.attrFloat("threshold", 0f)));
            return List.of(n.call("where", above, MathConverters.scalar(n, x, 1), MathConverters.scalar(n, x, 0)));
        });
        b.add(ML + "ArrayFeatureExtractor", n -> {
            int rank = n.inputRank(0);
            Expr y = n.call("take", List.of(n.input(0), n.input(1)), "axis", (long) rank - 1);
            // A 1-D input gives one row, [1, k], as ONNX's reference and ONNX Runtime do.
            return List.of(rank == 1 ? n.call("expand_dims", List.of(y), "axis", 0L, "num_newaxis", 1L) : y);
        });
        b.add(ML + "TreeEnsemble", MlConverters::treeEnsemble);
        b.add(ML + "LabelEncoder", MlConverters::labelEncoder);
        b.add(ML + "Scaler", MlConverters::scaler);
        b.add(ML + "Normalizer", MlConverters::normalizer);
        b.add(ML + "Imputer", MlConverters::imputer);
        b.add(ML + "OneHotEncoder", MlConverters::oneHotEncoder);
    }

    /**
     * LabelEncoder (opsets 1-4) as {@code label_encoder(x, keys, values, default)} with the three tables as constants:
     * opset 1's {@code classes_strings} maps strings to their index (default {@code default_int64}) or indices to
     * strings (default {@code default_string}); opsets 2-3 take one {@code keys_*} and one {@code values_*} list
     * (strings, int64s, floats) and the {@code default_*} of the values' type; opset 4 also takes
     * {@code keys_tensor}/{@code values_tensor}/{@code default_tensor} of any element type. ONNX's defaults apply:
     * "_Unused", -1, -0.0. The keys' type must be the input's.
     */
    private static List<Expr> labelEncoder(OnnxNode n) {
        DType xt = n.inputType(0).dtype();
        NDArray keys, values, dflt;
        if (n.opset() < 2) {
            List<String> classes = n.attrStrings("classes_strings");
            if (classes == null) throw n.unsupported("opset 1 needs classes_strings");
            long[] index = new long[classes.size()];
            for (int i = 0; i < index.length; i++) index[i] = i;
            NDArray names = NDArray.ofStrings(new int[] {classes.size()}, classes.toArray(String[]::new));
            NDArray numbers = NDArray.wrap(DType.INT64, new int[] {index.length}, index);
            if (xt.isString()) {
                keys = names;
                values = numbers;
                dflt = NDArray.scalar(n.attrInt("default_int64", -1));
            } else {
                keys = numbers;
                values = names;
                dflt = NDArray.ofStrings(new int[0], n.attrString("default_string", "_Unused"));
            }
            n.ignore("default_int64", "default_string");
        } else {
            keys = labelTable(n, "keys");
            values = labelTable(n, "values");
            if (keys == null || values == null) throw n.unsupported("needs one keys_* and one values_* attribute");
            dflt = labelDefault(n, values.dtype());
        }
        if (!keys.dtype().equals(xt)) throw n.unsupported("the keys are " + keys.dtype() + " but the input is " + xt);
        if (keys.rank() != 1 || values.rank() != 1 || keys.elementCount() != values.elementCount()) {
            throw n.unsupported("keys and values must be 1-D and as many, got " + java.util.Arrays.toString(keys.shape()) + " and " + java.util.Arrays.toString(values.shape()));
        }
        return List.of(n.call("label_encoder", n.input(0), OnnxNode.constant(keys), OnnxNode.constant(values), OnnxNode.constant(dflt)));
    }

    /** The one {@code keys_*} / {@code values_*} table given (strings, int64s, floats, or opset 4's tensor), or null. */
    private static NDArray labelTable(OnnxNode n, String prefix) {
        List<NDArray> given = new ArrayList<>();
        List<String> strings = n.attrStrings(prefix + "_strings");
        if (strings != null) given.add(NDArray.ofStrings(new int[] {strings.size()}, strings.toArray(String[]::new)));
        long[] ints = n.attrInts(prefix + "_int64s");
        if (ints != null) given.add(NDArray.wrap(DType.INT64, new int[] {ints.length}, ints));
        float[] floats = n.attrFloats(prefix + "_floats");
        if (floats != null) given.add(NDArray.wrap(DType.FLOAT32, new int[] {floats.length}, floats));
        if (n.opset() >= 4) {
            NDArray t = n.attrTensor(prefix + "_tensor");
            if (t != null) given.add(t.rank() == 1 ? t : NDArray.wrap(t.dtype(), new int[] {t.elementCount()}, t.data()));
        }
        if (given.size() > 1) throw n.unsupported("more than one " + prefix + "_* attribute is given");
        return given.isEmpty() ? null : given.getFirst();
    }

    /** The default value, a scalar of the values' dtype: default_tensor (opset 4), else default_string/int64/float, else ONNX's. */
    private static NDArray labelDefault(OnnxNode n, DType dt) {
        NDArray t = n.opset() >= 4 ? n.attrTensor("default_tensor") : null;
        n.ignore("default_string", "default_int64", "default_float");
        if (t != null) {
            if (!t.dtype().equals(dt) || t.elementCount() != 1) throw n.unsupported("default_tensor must be one " + dt + ", got " + t);
            return NDArray.wrap(dt, new int[0], t.data());
        }
        if (dt.isString()) return NDArray.ofStrings(new int[0], n.attrString("default_string", "_Unused"));
        if (dt.equals(DType.INT64)) return NDArray.scalar(n.attrInt("default_int64", -1));
        if (dt.equals(DType.FLOAT32)) return NDArray.scalar(n.attrFloat("default_float", -0.0f));
        // Other value types come only as values_tensor; ONNX's default for them is -1 / -0.0 by kind.
        return dt.isFloat() ? NDArray.fromDoubles(dt, new int[0], new double[] {-0.0}) : NDArray.fromLongs(dt, new int[0], new long[] {-1});
    }

    /** Node modes of TreeEnsemble (opset 5). */
    private static final int LEQ = 0, LT = 1, GTE = 2, GT = 3, EQ = 4, NEQ = 5, MEMBER = 6;
    private static final String[] COMPARISONS = {"less_equal", "less", "greater_equal", "greater", "equal", "not_equal"};

    /**
     * TreeEnsemble as matrix products: (1) every branch node's condition for every row at once — the node's feature
     * gathered into an [N, K] matrix and compared with the splits under each mode (set membership:
     * equality with every (node, value) pair, summed per node by a constant matrix); (2) the leaf
     * each tree reaches — a leaf's path is a set of nodes that must be true and a set that must be
     * false, so the row reaches leaf l exactly when (conditions · must-be-true) + (negations ·
     * must-be-false) equals the path's length; (3) the reached leaves' weights summed per target by
     * a constant [targets, leaves] matrix (divided by the number of trees for AVERAGE), then the post
     * transform. Steps (2) and (3) run per tree over the tree's own nodes, so their matrices grow with
     * a tree's size, not the forest's. MIN/MAX aggregation and the PROBIT/SOFTMAX_ZERO transforms are refused.
     */
    private static List<Expr> treeEnsemble(OnnxNode n) {
        TensorType xt = n.inputType(0);
        if (xt.rank() != 2) throw n.unsupported("input must be [N, features], got " + xt);
        DType dt = xt.dtype();
        if (!dt.isFloat()) throw n.unsupported("input must be a float tensor, got " + dt);
        long[] features = n.requiredInts("nodes_featureids"), trueIds = n.requiredInts("nodes_truenodeids"), falseIds = n.requiredInts("nodes_falsenodeids");
        long[] trueLeafs = n.requiredInts("nodes_trueleafs"), falseLeafs = n.requiredInts("nodes_falseleafs"), roots = n.requiredInts("tree_roots");
        long[] leafTargets = n.requiredInts("leaf_targetids");
        long[] tracksTrue = n.hasAttr("nodes_missing_value_tracks_true") ? n.attrInts("nodes_missing_value_tracks_true") : new long[features.length];
        NDArray modes = n.attrTensor("nodes_modes"), splits = n.attrTensor("nodes_splits"), weights = n.attrTensor("leaf_weights");
        NDArray members = n.attrTensor("membership_values");
        int targets = (int) n.attrInt("n_targets", 0);
        int aggregate = (int) n.attrInt("aggregate_function", 1), post = (int) n.attrInt("post_transform", 0);
        int k = features.length;
        if (modes == null || splits == null || weights == null) throw n.unsupported("nodes_modes, nodes_splits and leaf_weights are required");
        for (long[] a : List.of(trueIds, falseIds, trueLeafs, falseLeafs, tracksTrue)) {
            if (a.length != k) throw n.unsupported("every nodes_* attribute needs " + k + " entries (one per node, as nodes_featureids)");
        }
        if (modes.elementCount() != k || splits.elementCount() != k) throw n.unsupported("nodes_modes and nodes_splits need " + k + " entries");
        if (leafTargets.length != weights.elementCount()) throw n.unsupported("leaf_targetids and leaf_weights differ in length");
        if (aggregate != 0 && aggregate != 1) throw n.unsupported("aggregate_function " + aggregate + " (MIN/MAX) is not supported; AVERAGE (0) and SUM (1) are");
        if (post > 2) throw n.unsupported("post_transform " + post + " (SOFTMAX_ZERO/PROBIT) is not supported; NONE, SOFTMAX and LOGISTIC are");
        long nFeatures = xt.shape().get(1).isStatic() ? xt.shape().get(1).value() : Long.MAX_VALUE;
        for (long f : features) if (f < 0 || f >= nFeatures) throw n.unsupported("nodes_featureids has feature " + f + " outside the input's " + nFeatures);
        for (long t : leafTargets) if (t < 0 || t >= targets) throw n.unsupported("leaf_targetids has target " + t + " outside n_targets " + targets);

        // (1) conditions [N, K]
        Expr x = n.input(0);
        Expr gathered = n.call("take", List.of(x, ints(features)), "axis", 1L);
        Expr split = splits.dtype().equals(dt) ? OnnxNode.constant(splits) : MathConverters.cast(n, OnnxNode.constant(splits), dt);
        Expr cond = null;
        List<Integer> memberNodes = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            long m = modes.getLong(i);
            if (m < LEQ || m > MEMBER) throw n.unsupported("nodes_modes[" + i + "] is " + m + ", not a mode 0..6");
            if (m == MEMBER) memberNodes.add(i);
        }
        for (int mode = LEQ; mode <= NEQ; mode++) {
            boolean[] mask = maskOf(modes, mode);
            if (mask == null) continue;
            Expr c = n.call(COMPARISONS[mode], gathered, split);
            cond = cond == null ? c : n.call("where", bools(mask), c, cond);
        }
        if (!memberNodes.isEmpty()) {
            Expr member = membership(n, x, dt, features, memberNodes, members, k);
            cond = cond == null ? member : n.call("where", bools(maskOf(modes, MEMBER)), member, cond);
        }
        boolean[] tracks = new boolean[k];
        boolean anyTracks = false;
        for (int i = 0; i < k; i++) anyTracks |= tracks[i] = tracksTrue[i] != 0;
        if (anyTracks) cond = n.call("logical_or", cond, n.call("logical_and", n.call("isnan", gathered), bools(tracks)));

        // (2) and (3) per tree, so each matrix spans one tree's nodes and leaves only
        Expr c = MathConverters.cast(n, cond, DType.FLOAT32);
        Expr notC = n.call("subtract", OnnxNode.constant(NDArray.scalar(1f)), c);
        Expr y = null;
        for (long root : roots) {
            if (root < 0 || root >= k) throw n.unsupported("tree_roots has node " + root + " outside the " + k + " nodes");
            List<int[]> mustTrue = new ArrayList<>(), mustFalse = new ArrayList<>();
            List<Integer> leafOf = new ArrayList<>();
            paths(n, (int) root, trueIds, falseIds, trueLeafs, falseLeafs, leafTargets.length, mustTrue, mustFalse, leafOf);
            java.util.TreeMap<Integer, Integer> local = new java.util.TreeMap<>(); // the tree's nodes, in order
            for (List<int[]> side : List.of(mustTrue, mustFalse)) for (int[] path : side) for (int node : path) local.putIfAbsent(node, 0);
            int kt = 0;
            for (var e : local.entrySet()) e.setValue(kt++);
            int l = leafOf.size();
            float[] tMat = new float[Math.multiplyExact(l, kt)], fMat = new float[l * kt], depth = new float[l];
            for (int p = 0; p < l; p++) {
                for (int node : mustTrue.get(p)) tMat[p * kt + local.get(node)] = 1;
                for (int node : mustFalse.get(p)) fMat[p * kt + local.get(node)] = 1;
                depth[p] = mustTrue.get(p).length + mustFalse.get(p).length;
            }
            Expr nodes = ints(local.keySet().stream().mapToLong(Integer::longValue).toArray());
            Expr matches = n.call("add", n.call("nn.dense", n.call("take", List.of(c, nodes), "axis", 1L), f32(new int[] {l, kt}, tMat)),
                    n.call("nn.dense", n.call("take", List.of(notC, nodes), "axis", 1L), f32(new int[] {l, kt}, fMat)));
            Expr reached = MathConverters.cast(n, n.call("equal", matches, f32(new int[] {l}, depth)), dt);
            double[] w = new double[Math.multiplyExact(targets, l)];
            for (int p = 0; p < l; p++) {
                int leaf = leafOf.get(p);
                w[(int) leafTargets[leaf] * l + p] += weights.getDouble(leaf) / (aggregate == 0 ? roots.length : 1);
            }
            Expr tree = n.call("nn.dense", reached, OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {targets, l}, w)));
            y = y == null ? tree : n.call("add", y, tree);
        }
        if (y == null) throw n.unsupported("tree_roots is empty");
        return List.of(switch (post) {
            case 1 -> n.call("nn.softmax", List.of(y), "axis", 1L);
            case 2 -> n.call("sigmoid", y);
            default -> y;
        });
    }

    /** Set membership for MEMBER nodes as [N, K] (meaningless elsewhere): their sets are membership_values split at NaNs, in node order. */
    private static Expr membership(OnnxNode n, Expr x, DType dt, long[] features, List<Integer> memberNodes, NDArray values, int k) {
        if (values == null) throw n.unsupported("BRANCH_MEMBER nodes need membership_values");
        List<Long> pairFeature = new ArrayList<>();
        List<Double> pairValue = new ArrayList<>();
        List<Integer> pairSet = new ArrayList<>();
        int set = 0;
        for (int i = 0; i < values.elementCount() && set < memberNodes.size(); i++) {
            double v = values.getDouble(i);
            if (Double.isNaN(v)) {
                set++;
                continue;
            }
            int node = memberNodes.get(set);
            pairFeature.add(features[node]);
            pairValue.add(v);
            pairSet.add(set);
        }
        if (set < memberNodes.size() - 1 || pairSet.isEmpty()) {
            throw n.unsupported("membership_values holds " + (set + 1) + " NaN-separated sets for " + memberNodes.size() + " BRANCH_MEMBER nodes");
        }
        int p = pairSet.size(), m = memberNodes.size();
        Expr xs = n.call("take", List.of(x, ints(pairFeature.stream().mapToLong(Long::longValue).toArray())), "axis", 1L);
        Expr eq = MathConverters.cast(n, n.call("equal", xs, OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {p},
                pairValue.stream().mapToDouble(Double::doubleValue).toArray()))), DType.FLOAT32);
        // matches summed per MEMBER node ([N, m]), then spread to the K node columns (non-members read column 0, masked by the caller)
        float[] a = new float[Math.multiplyExact(m, p)];
        for (int i = 0; i < p; i++) a[pairSet.get(i) * p + i] = 1;
        Expr member = n.call("greater", n.call("nn.dense", eq, f32(new int[] {m, p}, a)), OnnxNode.constant(NDArray.scalar(0f)));
        long[] column = new long[k];
        for (int j = 0; j < m; j++) column[memberNodes.get(j)] = j;
        return n.call("take", List.of(member, ints(column)), "axis", 1L);
    }

    /** Every root-to-leaf path of one tree (iterative, a DAG's shared nodes walked once per path). */
    private static void paths(OnnxNode n, int root, long[] trueIds, long[] falseIds, long[] trueLeafs, long[] falseLeafs, int leaves,
                              List<int[]> mustTrue, List<int[]> mustFalse, List<Integer> leafOf) {
        record Step(int node, int[] t, int[] f) {}
        java.util.ArrayDeque<Step> work = new java.util.ArrayDeque<>();
        work.push(new Step(root, new int[0], new int[0]));
        int limit = 1 << 20;
        while (!work.isEmpty()) {
            Step s = work.pop();
            if (s.t().length + s.f().length > trueIds.length) throw n.unsupported("the tree from root " + root + " has a cycle");
            for (boolean branch : new boolean[] {true, false}) {
                int[] t = branch ? append(s.t(), s.node()) : s.t();
                int[] f = branch ? s.f() : append(s.f(), s.node());
                long next = branch ? trueIds[s.node()] : falseIds[s.node()];
                boolean leaf = (branch ? trueLeafs[s.node()] : falseLeafs[s.node()]) != 0;
                if (leaf) {
                    if (next < 0 || next >= leaves) throw n.unsupported("node " + s.node() + " points to leaf " + next + " outside the " + leaves + " leaves");
                    mustTrue.add(t);
                    mustFalse.add(f);
                    leafOf.add((int) next);
                    if (leafOf.size() > limit) throw n.unsupported("more than " + limit + " root-to-leaf paths");
                } else {
                    if (next < 0 || next >= trueIds.length) throw n.unsupported("node " + s.node() + " points to node " + next + " outside the " + trueIds.length + " nodes");
                    work.push(new Step((int) next, t, f));
                }
            }
        }
    }

    private static int[] append(int[] a, int v) {
        int[] out = java.util.Arrays.copyOf(a, a.length + 1);
        out[a.length] = v;
        return out;
    }

    private static boolean[] maskOf(NDArray modes, int mode) {
        boolean[] mask = new boolean[(int) modes.elementCount()];
        boolean any = false;
        for (int i = 0; i < mask.length; i++) any |= mask[i] = modes.getLong(i) == mode;
        return any ? mask : null;
    }

    private static Expr bools(boolean[] mask) {
        long[] v = new long[mask.length];
        for (int i = 0; i < mask.length; i++) v[i] = mask[i] ? 1 : 0;
        return OnnxNode.constant(NDArray.fromLongs(DType.BOOL, new int[] {mask.length}, v));
    }

    private static Expr ints(long[] v) {
        return OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {v.length}, v));
    }

    private static Expr f32(int[] shape, float[] v) {
        return OnnxNode.constant(NDArray.wrap(DType.FLOAT32, shape, v));
    }

    /** Scaler: (x - offset) * scale in float32, offset and scale one value or one per feature (the last axis). */
    private static List<Expr> scaler(OnnxNode n) {
        float[] offset = n.attrFloats("offset"), scale = n.attrFloats("scale");
        if (offset == null || scale == null) throw n.unsupported("attributes 'offset' and 'scale' are required");
        Expr x = MathConverters.cast(n, n.input(0), DType.FLOAT32);
        return List.of(n.call("multiply", n.call("subtract", x, perFeature(n, offset)), perFeature(n, scale)));
    }

    /**
     * Normalizer: each row (the last axis) divided by its MAX (largest magnitude), L1 or L2 norm, in
     * float32; a zero norm divides by 1e-30 as ONNX's reference does, so a zero row stays zero.
     */
    private static List<Expr> normalizer(OnnxNode n) {
        String norm = n.attrString("norm", "MAX");
        Expr x = MathConverters.cast(n, n.input(0), DType.FLOAT32);
        long[] last = {-1};
        Expr div = switch (norm) {
            case "MAX" -> n.call("max", List.of(n.call("abs", x)), "axis", last, "keepdims", true);
            case "L1" -> n.call("sum", List.of(n.call("abs", x)), "axis", last, "keepdims", true);
            case "L2" -> n.call("sqrt", n.call("sum", List.of(n.call("multiply", x, x)), "axis", last, "keepdims", true));
            default -> throw n.unsupported("norm must be MAX, L1 or L2, got '" + norm + "'");
        };
        return List.of(n.call("divide", x, n.call("maximum", div, OnnxNode.constant(NDArray.scalar(1e-30f)))));
    }

    /** Imputer: elements equal to replaced_value_* (NaN matches NaN) become the imputed value of their feature. */
    private static List<Expr> imputer(OnnxNode n) {
        Expr x = n.input(0);
        DType dt = n.inputType(0).dtype();
        float[] floats = n.attrFloats("imputed_value_floats");
        long[] ints = n.attrInts("imputed_value_int64s");
        Expr mask, imputed;
        if (dt.isFloat()) {
            if (floats == null) throw n.unsupported("a float input needs imputed_value_floats");
            float replaced = n.attrFloat("replaced_value_float", 0f); // the spec's default; NaN is the usual choice
            mask = Float.isNaN(replaced) ? n.call("isnan", x) : n.call("equal", x, MathConverters.scalar(n, x, replaced));
            imputed = MathConverters.cast(n, perFeature(n, floats), dt);
        } else if (dt.isInteger()) {
            if (ints == null) throw n.unsupported("an integer input needs imputed_value_int64s");
            long replaced = n.attrInt("replaced_value_int64", 0);
            mask = n.call("equal", x, OnnxNode.constant(NDArray.fromLongs(dt, new int[0], new long[] {replaced})));
            imputed = OnnxNode.constant(NDArray.fromLongs(dt, new int[] {ints.length}, ints));
        } else {
            throw n.unsupported("input must be a float or integer tensor, got " + dt);
        }
        return List.of(n.call("where", mask, imputed, x));
    }

    /**
     * OneHotEncoder: a new last axis with one float 1 at the position of each element's category
     * (cats_int64s or cats_strings), all zeros for a category not listed; zeros=0, which makes an
     * unlisted category a run-time error, is refused.
     */
    private static List<Expr> oneHotEncoder(OnnxNode n) {
        if (n.attrInt("zeros", 1) == 0) throw n.unsupported("zeros=0 (an unlisted category as a run-time error) is not supported; zeros=1 is");
        long[] ints = n.attrInts("cats_int64s");
        List<String> strings = n.attrStrings("cats_strings");
        DType dt = n.inputType(0).dtype();
        NDArray cats;
        if (strings != null && dt.isString()) {
            cats = NDArray.ofStrings(new int[] {strings.size()}, strings.toArray(String[]::new));
        } else if (ints != null && (dt.isInteger() || dt.isFloat())) {
            cats = NDArray.fromLongs(dt, new int[] {ints.length}, ints);
        } else {
            throw n.unsupported("needs cats_strings for a string input or cats_int64s for a numeric one (input " + dt + ")");
        }
        Expr x = n.call("expand_dims", List.of(n.input(0)), "axis", (long) n.inputRank(0), "num_newaxis", 1L);
        return List.of(MathConverters.cast(n, n.call("equal", x, OnnxNode.constant(cats)), DType.FLOAT32));
    }

    /** One float, or one per feature (broadcast along the last axis). */
    private static Expr perFeature(OnnxNode n, float[] v) {
        return OnnxNode.constant(v.length == 1 ? NDArray.scalar(v[0]) : NDArray.wrap(DType.FLOAT32, new int[] {v.length}, v.clone()));
    }
}
