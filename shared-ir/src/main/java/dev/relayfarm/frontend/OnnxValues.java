package dev.relayfarm.frontend;

import com.google.protobuf.Message;
import dev.relayfarm.frontend.proto.Onnx.OptionalProto;
import dev.relayfarm.frontend.proto.Onnx.SequenceProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.ir.NDArray;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX values as the data files of the backend tests hold them ({@code TensorProto},
 * {@code SequenceProto}, {@code OptionalProto}), read into what the importer and {@code @main} take:
 * the {@link ValueLayout} of a sequence or optional graph input, and its tensors flattened depth
 * first, one per parameter. Map and sparse values are not supported (errors naming the file).
 */
public final class OnnxValues {
    private OnnxValues() {}

    /** A value read from a data file: a tensor, or a sequence/optional of values (an empty optional holds null). */
    public sealed interface Read {}

    public record TensorRead(NDArray data) implements Read {}

    public record SequenceRead(List<Read> elements) implements Read {}

    public record OptionalRead(Read element) implements Read {}

    /** Reads {@code m}, one of the three data-file messages; {@code where} prefixes errors. */
    public static Read read(Message m, Path baseDir, String where) {
        return switch (m) {
            case TensorProto t -> new TensorRead(OnnxTensors.toNDArray(t, baseDir, where));
            case SequenceProto s -> sequence(s, baseDir, where);
            case OptionalProto o -> optional(o, baseDir, where);
            default -> throw new OnnxFormatException(where + ": a " + m.getDescriptorForType().getName() + " is not an ONNX value");
        };
    }

    private static Read sequence(SequenceProto s, Path baseDir, String where) {
        List<Read> out = new ArrayList<>();
        int kind = s.getElemType();
        if (kind == SequenceProto.DataType.MAP_VALUE || kind == SequenceProto.DataType.SPARSE_TENSOR_VALUE
                || s.getMapValuesCount() > 0 || s.getSparseTensorValuesCount() > 0) {
            throw new OnnxFormatException(where + ": sequences of maps or sparse tensors are not supported");
        }
        for (int i = 0; i < s.getTensorValuesCount(); i++) out.add(new TensorRead(OnnxTensors.toNDArray(s.getTensorValues(i), baseDir, where + " element " + i)));
        for (int i = 0; i < s.getSequenceValuesCount(); i++) out.add(sequence(s.getSequenceValues(i), baseDir, where + " element " + i));
        for (int i = 0; i < s.getOptionalValuesCount(); i++) out.add(optional(s.getOptionalValues(i), baseDir, where + " element " + i));
        int kinds = (s.getTensorValuesCount() > 0 ? 1 : 0) + (s.getSequenceValuesCount() > 0 ? 1 : 0) + (s.getOptionalValuesCount() > 0 ? 1 : 0);
        if (kinds > 1) throw new OnnxFormatException(where + ": a sequence holds values of more than one kind");
        return new SequenceRead(out);
    }

    private static Read optional(OptionalProto o, Path baseDir, String where) {
        if (o.hasTensorValue()) return new OptionalRead(new TensorRead(OnnxTensors.toNDArray(o.getTensorValue(), baseDir, where)));
        if (o.hasSequenceValue()) return new OptionalRead(sequence(o.getSequenceValue(), baseDir, where));
        if (o.hasOptionalValue()) return new OptionalRead(optional(o.getOptionalValue(), baseDir, where));
        if (o.hasMapValue() || o.hasSparseTensorValue()) throw new OnnxFormatException(where + ": optional maps or sparse tensors are not supported");
        return new OptionalRead(null);
    }

    /** The structure of {@code v}: its sequences' lengths, its tensors' shapes. */
    public static ValueLayout layout(Read v) {
        return switch (v) {
            case TensorRead t -> new ValueLayout.Tensor(java.util.Arrays.stream(t.data().shape()).mapToObj(d -> (long) d).toList());
            case SequenceRead s -> new ValueLayout.Sequence(s.elements().stream().map(OnnxValues::layout).toList());
            case OptionalRead o -> new ValueLayout.Optional(o.element() == null ? null : layout(o.element()));
        };
    }

    /** The tensors of {@code v} depth first: the arguments its graph input's parameters take. */
    public static List<NDArray> flatten(Read v) {
        List<NDArray> out = new ArrayList<>();
        flatten(v, out);
        return out;
    }

    private static void flatten(Read v, List<NDArray> out) {
        switch (v) {
            case TensorRead t -> out.add(t.data());
            case SequenceRead s -> s.elements().forEach(e -> flatten(e, out));
            case OptionalRead o -> {
                if (o.element() != null) flatten(o.element(), out);
            }
        }
    }
}
