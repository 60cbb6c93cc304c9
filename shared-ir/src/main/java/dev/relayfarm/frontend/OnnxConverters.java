package dev.relayfarm.frontend;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The converters by op type, built once in code; each family of operators registers itself in its
 * own class. Operators of the default ONNX domain go by their op type, those of another domain by
 * {@code domain.OpType} (e.g. {@code ai.onnx.preview.FlexAttention}). A duplicate fails fast.
 */
public final class OnnxConverters {
    private static final Map<String, OnnxConverter> CONVERTERS = build();

    private OnnxConverters() {}

    /** Collects registrations; rejects a second converter for the same op type. */
    public static final class Builder {
        private final Map<String, OnnxConverter> map = new TreeMap<>();

        public void add(String opType, OnnxConverter c) {
            if (map.putIfAbsent(opType, c) != null) throw new IllegalStateException("ONNX op " + opType + " registered twice");
        }
    }

    private static Map<String, OnnxConverter> build() {
        Builder b = new Builder();
        ElementwiseConverters.register(b);
        NnConverters.register(b);
        TensorConverters.register(b);
        ReduceConverters.register(b);
        MathConverters.register(b);
        MiscConverters.register(b);
        QuantizeConverters.register(b);
        SignalConverters.register(b);
        ControlFlowConverters.register(b);
        ImageConverters.register(b);
        NormConverters.register(b);
        LossConverters.register(b);
        AttentionConverters.register(b);
        RecurrentStateConverters.register(b);
        QuantConverters.register(b);
        DetectionConverters.register(b);
        RecurrentConverters.register(b);
        FourierConverters.register(b);
        GridConverters.register(b);
        IndexingConverters.register(b);
        TextConverters.register(b);
        MlConverters.register(b);
        SequenceConverters.register(b);
        TrainingConverters.register(b);
        SpatialConverters.register(b);
        return Collections.unmodifiableMap(b.map);
    }

    public static Optional<OnnxConverter> find(String opType) {
        return Optional.ofNullable(CONVERTERS.get(opType));
    }

    /** ONNX op types we can convert, sorted (not our own domain's: a QDQ pair rewritten as a quantize point is no operator a model brings). */
    public static java.util.Set<String> supported() {
        return java.util.Collections.unmodifiableSortedSet(CONVERTERS.keySet().stream().filter(op -> !op.startsWith(OnnxImporter.OUR_DOMAIN + "."))
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new)));
    }
}
