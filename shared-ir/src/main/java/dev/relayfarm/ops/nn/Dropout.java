package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.dropout(data, rate=0.5)} → {@code (data, mask)} as TVM types it. The kernel has inference
 * semantics (TVM's SimplifyInference removes dropout): the data passes through unchanged and the mask
 * keeps every element (all ones).
 */
public final class Dropout {
    public static final String NAME = "nn.dropout";

    private Dropout() {}

    public record DropoutAttrs(double rate) {}

    public static OpDef<DropoutAttrs> def() {
        return new OpDef<>(NAME, 1, Dropout::parse, Dropout::relation, OpPattern.OPAQUE, Dropout::compute);
    }

    static DropoutAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        DropoutAttrs a = new DropoutAttrs(r.real("rate", 0.5));
        r.finish();
        if (!(a.rate() >= 0 && a.rate() <= 1)) throw new RelationException(NAME + ": rate must be in [0, 1], got " + a.rate());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, DropoutAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        reporter.assign(types.get(1), new TupleType(List.of(data, data)));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, DropoutAttrs a) {
        NDArray x = inputs.getFirst();
        NDArray mask = NDArray.zeros(x.dtype(), x.shape());
        for (int i = 0; i < mask.size(); i++) mask.setDouble(i, 1);
        return List.of(x, mask);
    }
}
