package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX operators over text and token sequences: TfIdfVectorizer (integer tokens, static dataflow), and the string
 * operators StringConcat, RegexFullMatch, StringSplit, StringNormalizer, which map one to one onto the
 * {@code strings.*} Relay operators (interpreter only: compiled artifacts hold no strings).
 */
final class TextConverters {
    private TextConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("TfIdfVectorizer", TextConverters::tfIdf);
        b.add("StringConcat", n -> List.of(n.call("strings.concat", n.input(0), n.input(1))));
        b.add("RegexFullMatch", n -> {
            String pattern = n.attrString("pattern", null);
            if (pattern == null) throw n.unsupported("attribute 'pattern' is required");
            return List.of(n.call("strings.regex_full_match", List.of(n.input(0)), "pattern", pattern));
        });
        b.add("StringSplit", n -> {
            List<Object> kv = new ArrayList<>();
            String delimiter = n.attrString("delimiter", null);
            if (delimiter != null && !delimiter.isEmpty()) kv.addAll(List.of("delimiter", delimiter));
            if (n.hasAttr("maxsplit")) {
                long m = n.attrInt("maxsplit", 0);
                if (m < 0) throw n.unsupported("maxsplit must be >= 0, got " + m);
                kv.addAll(List.of("maxsplit", m));
            }
            Expr split = n.call("strings.split", List.of(n.input(0)), kv.toArray());
            return List.of(new TupleGetItem(split, 0), new TupleGetItem(split, 1));
        });
        b.add("StringNormalizer", n -> {
            String action = n.attrString("case_change_action", "NONE");
            if (!List.of("NONE", "LOWER", "UPPER").contains(action)) throw n.unsupported("case_change_action must be NONE, LOWER or UPPER, got '" + action + "'");
            List<String> stopwords = n.attrStrings("stopwords");
            return List.of(n.call("strings.normalize", List.of(n.input(0)), "case_change_action", action,
                    "is_case_sensitive", n.attrInt("is_case_sensitive", 0) != 0,
                    "stopwords", stopwords == null ? List.of() : stopwords, "locale", n.attrString("locale", "")));
        });
    }

    /**
     * TfIdfVectorizer over integer tokens, as static dataflow: for each n-gram length n in
     * [min_gram_length, max_gram_length] and each skip s in [0, max_skip_count] (unigrams once), the
     * n tokens at distance s + 1 from every start position are compared with each pool n-gram
     * ({@code equal} against a constant column, {@code logical_and} over the n positions) and the
     * matches summed over positions; the per-pool-entry counts then go to their output slots
     * ({@code ngram_indexes}) through a constant 0/weight matrix, so the whole op compiles like any
     * other dataflow. The sequence length must be static.
     */
    private static List<Expr> tfIdf(OnnxNode n) {
        if (n.hasAttr("pool_strings")) throw n.unsupported("pool_strings (string tokens) is not supported; integer pools (pool_int64s) are");
        TensorType xt = n.inputType(0);
        if (!xt.dtype().isInteger()) throw n.unsupported("input must be int32 or int64 tokens, got " + xt.dtype());
        int rank = xt.rank();
        if (rank != 1 && rank != 2) throw n.unsupported("input must be [C] or [N, C], got " + xt);
        if (!xt.shape().get(rank - 1).isStatic()) throw n.unsupported("the sequence length (last dim) must be static, got " + xt);
        int c = Math.toIntExact(xt.shape().get(rank - 1).value());
        int minN = (int) n.attrInt("min_gram_length", 0), maxN = (int) n.attrInt("max_gram_length", 0), maxSkip = (int) n.attrInt("max_skip_count", 0);
        String mode = n.attrString("mode", "");
        long[] counts = n.requiredInts("ngram_counts"), indexes = n.requiredInts("ngram_indexes"), pool = n.requiredInts("pool_int64s");
        float[] weights = n.hasAttr("weights") ? n.attrFloats("weights") : null;
        if (minN < 1 || maxN < minN) throw n.unsupported("need 1 <= min_gram_length <= max_gram_length, got " + minN + ".." + maxN);
        if (maxSkip < 0) throw n.unsupported("max_skip_count must be >= 0, got " + maxSkip);
        if (!mode.equals("TF") && !mode.equals("IDF") && !mode.equals("TFIDF")) throw n.unsupported("mode must be TF, IDF or TFIDF, got '" + mode + "'");
        // Pool entries: ngram_counts[k] is where the (k+1)-grams start in pool_int64s.
        List<long[]> grams = new ArrayList<>();
        for (int k = 0; k < counts.length; k++) {
            int len = k + 1;
            long start = counts[k], end = k + 1 < counts.length ? counts[k + 1] : pool.length;
            if (start < 0 || end < start || end > pool.length || (end - start) % len != 0) {
                throw n.unsupported("ngram_counts " + java.util.Arrays.toString(counts) + " does not split pool_int64s (" + pool.length + " tokens) into n-grams");
            }
            for (long p = start; p < end; p += len) grams.add(java.util.Arrays.copyOfRange(pool, (int) p, (int) p + len));
        }
        if (grams.isEmpty()) throw n.unsupported("pool_int64s holds no n-grams");
        if (indexes.length != grams.size()) throw n.unsupported("ngram_indexes has " + indexes.length + " entries for " + grams.size() + " pool n-grams");
        if (weights != null && weights.length != grams.size()) throw n.unsupported("weights has " + weights.length + " entries for " + grams.size() + " pool n-grams");
        int outSize = 0;
        for (long i : indexes) {
            if (i < 0) throw n.unsupported("ngram_indexes must be >= 0, got " + i);
            outSize = Math.max(outSize, Math.toIntExact(i) + 1);
        }

        Expr x = rank == 1 ? n.call("expand_dims", List.of(n.input(0)), "axis", 0L, "num_newaxis", 1L) : n.input(0);
        DType tokens = xt.dtype();
        // Counts per pool entry, one [N, 1] column each (zero for lengths outside [minN, maxN] or too long for C).
        List<Expr> columns = new ArrayList<>();
        for (long[] gram : grams) {
            int len = gram.length;
            Expr total = null;
            if (len >= minN && len <= maxN) {
                for (int s = 0; s <= (len == 1 ? 0 : maxSkip); s++) {
                    int positions = c - (len - 1) * (s + 1);
                    if (positions <= 0) continue;
                    Expr match = null;
                    for (int j = 0; j < len; j++) {
                        int begin = j * (s + 1);
                        Expr window = n.call("strided_slice", List.of(x), "begin", new long[] {begin}, "end", new long[] {begin + positions}, "axes", new long[] {1});
                        Expr eq = n.call("equal", window, OnnxNode.constant(NDArray.fromLongs(tokens, new int[0], new long[] {gram[j]})));
                        match = match == null ? eq : n.call("logical_and", match, eq);
                    }
                    Expr found = n.call("sum", List.of(MathConverters.cast(n, match, DType.FLOAT32)), "axis", new long[] {1}, "keepdims", true);
                    total = total == null ? found : n.call("add", total, found);
                }
            }
            if (total == null) { // a length outside [minN, maxN] or longer than the sequence: a zero column
                Expr first = n.call("strided_slice", List.of(x), "begin", new long[] {0}, "end", new long[] {1}, "axes", new long[] {1});
                total = n.call("zeros_like", MathConverters.cast(n, first, DType.FLOAT32));
            }
            columns.add(total);
        }
        Expr tf = columns.size() == 1 ? columns.get(0) : n.call("concatenate", List.of(new dev.relayfarm.ir.Tuple(columns)), "axis", 1L);
        if (mode.equals("IDF")) tf = MathConverters.cast(n, n.call("greater", tf, OnnxNode.constant(NDArray.scalar(0f))), DType.FLOAT32);
        // Pool entry m goes to output slot indexes[m], scaled by its weight (TF: 1).
        float[] scatter = new float[outSize * grams.size()];
        for (int m = 0; m < grams.size(); m++) {
            scatter[(int) indexes[m] * grams.size() + m] = mode.equals("TF") || weights == null ? 1f : weights[m];
        }
        Expr y = n.call("nn.dense", tf, OnnxNode.constant(NDArray.wrap(DType.FLOAT32, new int[] {outSize, grams.size()}, scatter)));
        return List.of(rank == 1 ? n.call("squeeze", List.of(y), "axis", new long[] {0}) : y);
    }
}
