package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.i64;
import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.ints;
import static dev.relayfarm.frontend.OnnxImporterTest.runOneNode;
import static dev.relayfarm.frontend.OnnxImporterTest.str;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TfIdfVectorizer beyond the node suite (which has TF mode only): skips counted per distance,
 * unigrams once, IDF and TFIDF weights, min_gram_length, and the errors.
 */
class TextConvertersTest {
    // pool: unigrams 2 and 3 (output slots 0, 1), bigram (1, 2) (slot 2)
    private static final AttributeProto COUNTS = ints("ngram_counts", 0, 2);
    private static final AttributeProto POOL = ints("pool_int64s", 2, 3, 1, 2);
    private static final AttributeProto INDEXES = ints("ngram_indexes", 0, 1, 2);

    private static float[] tfIdf(String mode, long minGram, AttributeProto... more) {
        // (1, 2) occurs at distance 1 (positions 3-4) and at distance 2 (positions 0-2); 2 occurs twice
        NDArray tokens = i64(new int[] {5}, 1, 5, 2, 1, 2);
        List<AttributeProto> attrs = new java.util.ArrayList<>(List.of(COUNTS, POOL, INDEXES, str("mode", mode),
                intAttr("min_gram_length", minGram), intAttr("max_gram_length", 2), intAttr("max_skip_count", 1)));
        attrs.addAll(List.of(more));
        return runOneNode("TfIdfVectorizer", 9, List.of(tokens), attrs.toArray(AttributeProto[]::new)).floatData();
    }

    private static AttributeProto weights(float... w) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName("weights").setType(AttributeProto.AttributeType.FLOATS);
        for (float x : w) b.addFloats(x);
        return b.build();
    }

    @Test
    void countsEverySkipDistanceButUnigramsOnce() {
        assertArrayEquals(new float[] {2, 0, 2}, tfIdf("TF", 1));
        assertArrayEquals(new float[] {0, 0, 2}, tfIdf("TF", 2), "n-grams shorter than min_gram_length count nothing");
    }

    @Test
    void idfAndTfIdfApplyThePoolWeights() {
        assertArrayEquals(new float[] {0.5f, 0, 0.25f}, tfIdf("IDF", 1, weights(0.5f, 2, 0.25f)));
        assertArrayEquals(new float[] {1, 0, 0.5f}, tfIdf("TFIDF", 1, weights(0.5f, 2, 0.25f)));
    }

    @Test
    void rejectsStringPoolsAndInconsistentPools() {
        AttributeProto strings = AttributeProto.newBuilder().setName("pool_strings").setType(AttributeProto.AttributeType.STRINGS)
                .addStrings(com.google.protobuf.ByteString.copyFromUtf8("a")).build();
        RuntimeException s = assertThrows(RuntimeException.class, () -> tfIdf("TF", 1, strings));
        assertTrue(s.getMessage().contains("pool_strings (string tokens) is not supported"), s.getMessage());
        RuntimeException m = assertThrows(RuntimeException.class, () -> tfIdf("BM25", 1));
        assertTrue(m.getMessage().contains("mode must be TF, IDF or TFIDF, got 'BM25'"), m.getMessage());
    }
}
