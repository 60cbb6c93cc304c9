package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code reinterpret(data, dtype)}: the same bits read as another dtype of the same storage width
 * (float32 1.0 is int32 1065353216); the shape is unchanged. bool occupies one byte, so it pairs
 * with int8/uint8. ELEMWISE as in TVM.
 */
public final class Reinterpret {
    private Reinterpret() {}

    public record ReinterpretAttrs(DType dtype) {}

    public static final OpDef<ReinterpretAttrs> DEF = new OpDef<>(
            "reinterpret", 1, Reinterpret::parse, Reinterpret::relation, OpPattern.ELEMWISE, (in, a) -> {
                NDArray x = in.getFirst();
                checkWidth(x.dtype(), a.dtype());
                return List.of(NDArray.fromBytes(a.dtype(), x.shape(), x.toBytes()));
            });

    static ReinterpretAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("reinterpret", attrs);
        if (!r.has("dtype")) throw new RelationException("reinterpret: attribute 'dtype' is required");
        ReinterpretAttrs a = new ReinterpretAttrs(r.dtype("dtype", null));
        r.finish();
        return a;
    }

    private static void checkWidth(DType from, DType to) {
        if (from.bits() < 8 && !from.isBool() || to.bits() < 8 && !to.isBool()) {
            // int4 is stored sign-extended and float4 as its code, one per byte: their bytes are not each other's bits
            throw new RelationException("reinterpret: " + from + " to " + to + " is not supported (4- and 2-bit types have no bit-level reinterpretation here)");
        }
        if (from.storageBytes() != to.storageBytes()) {
            throw new RelationException("reinterpret: " + from + " and " + to + " differ in width ("
                    + from.storageBytes() * 8 + " vs " + to.storageBytes() * 8 + " bits)");
        }
    }

    static boolean relation(List<Type> types, int numInputs, ReinterpretAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("reinterpret", types, 0, "data");
        if (data == null) return false;
        checkWidth(data.dtype(), a.dtype());
        reporter.assign(types.get(1), new TensorType(data.shape(), a.dtype()));
        return true;
    }
}
