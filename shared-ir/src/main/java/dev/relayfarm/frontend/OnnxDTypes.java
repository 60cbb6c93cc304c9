package dev.relayfarm.frontend;

import dev.relayfarm.frontend.proto.Onnx.TensorProto.DataType;
import dev.relayfarm.ir.DType;
import java.util.Optional;

/** Maps ONNX element types (TensorProto.DataType numbers) to Relay dtypes and back. */
public final class OnnxDTypes {
    private OnnxDTypes() {}

    /** The Relay dtype of ONNX element type {@code code}, or empty when Relay has none (complex). */
    public static Optional<DType> toDType(int code) {
        DataType t = DataType.forNumber(code);
        if (t == null) return Optional.empty();
        return Optional.ofNullable(switch (t) {
            case FLOAT -> DType.FLOAT32;
            case DOUBLE -> DType.FLOAT64;
            case FLOAT16 -> DType.FLOAT16;
            case BFLOAT16 -> DType.BFLOAT16;
            case INT8 -> DType.INT8;
            case INT16 -> DType.INT16;
            case INT32 -> DType.INT32;
            case INT64 -> DType.INT64;
            case UINT8 -> DType.UINT8;
            case UINT16 -> DType.UINT16;
            case UINT32 -> DType.UINT32;
            case UINT64 -> DType.UINT64;
            case BOOL -> DType.BOOL;
            case INT4 -> DType.INT4;
            case UINT4 -> DType.UINT4;
            case INT2 -> DType.INT2;
            case UINT2 -> DType.UINT2;
            case FLOAT8E4M3FN -> DType.FLOAT8_E4M3FN;
            case FLOAT8E4M3FNUZ -> DType.FLOAT8_E4M3FNUZ;
            case FLOAT8E5M2 -> DType.FLOAT8_E5M2;
            case FLOAT8E5M2FNUZ -> DType.FLOAT8_E5M2FNUZ;
            case FLOAT8E8M0 -> DType.FLOAT8_E8M0FNU;
            case FLOAT4E2M1 -> DType.FLOAT4_E2M1FN;
            case STRING -> DType.STRING;
            default -> null;
        });
    }

    /** Like {@link #toDType} but throws naming the type and {@code where} when unsupported. */
    public static DType require(int code, String where) {
        return toDType(code).orElseThrow(() -> new UnsupportedOpException(
                where + ": unsupported ONNX element type " + name(code), "dtype " + name(code)));
    }

    public static String name(int code) {
        DataType t = DataType.forNumber(code);
        return t == null ? "#" + code : t.name();
    }

    /** The ONNX element type number of a Relay dtype (lanes must be 1). */
    public static int toOnnx(DType dtype) {
        if (dtype.lanes() != 1) throw new IllegalArgumentException("ONNX has no vector dtype " + dtype);
        return switch (dtype.code()) {
            case FLOAT -> dtype.bits() == 16 ? DataType.FLOAT16_VALUE : dtype.bits() == 32 ? DataType.FLOAT_VALUE : DataType.DOUBLE_VALUE;
            case BFLOAT -> DataType.BFLOAT16_VALUE;
            case BOOL -> DataType.BOOL_VALUE;
            case FLOAT8_E4M3FN -> DataType.FLOAT8E4M3FN_VALUE;
            case FLOAT8_E4M3FNUZ -> DataType.FLOAT8E4M3FNUZ_VALUE;
            case FLOAT8_E5M2 -> DataType.FLOAT8E5M2_VALUE;
            case FLOAT8_E5M2FNUZ -> DataType.FLOAT8E5M2FNUZ_VALUE;
            case FLOAT8_E8M0FNU -> DataType.FLOAT8E8M0_VALUE;
            case FLOAT4_E2M1FN -> DataType.FLOAT4E2M1_VALUE;
            case STRING -> DataType.STRING_VALUE;
            case INT -> switch (dtype.bits()) {
                case 2 -> DataType.INT2_VALUE;
                case 4 -> DataType.INT4_VALUE;
                case 8 -> DataType.INT8_VALUE;
                case 16 -> DataType.INT16_VALUE;
                case 32 -> DataType.INT32_VALUE;
                default -> DataType.INT64_VALUE;
            };
            case UINT -> switch (dtype.bits()) {
                case 2 -> DataType.UINT2_VALUE;
                case 4 -> DataType.UINT4_VALUE;
                case 8 -> DataType.UINT8_VALUE;
                case 16 -> DataType.UINT16_VALUE;
                case 32 -> DataType.UINT32_VALUE;
                default -> DataType.UINT64_VALUE;
            };
        };
    }
}
