package dev.relayfarm.quantize;

import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.passes.Pass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassResult;
import dev.relayfarm.passes.Sequential;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.Base64;
import java.util.List;

/** Relay text in, text out for the quantize passes (they are not in the pass registry, which sits below them). */
final class QuantizeText {
    private QuantizeText() {}

    static IRModule typed(String text) {
        return TypeInference.infer(RelayParser.parseModule("#[version = \"0.0.5\"]\n" + text, "test")).module();
    }

    static PassResult run(Pass pass, IRModule in) {
        return new Sequential("test", List.of(pass)).run(in, new PassContext(PassOptions.level(0).withValidate(true)));
    }

    /** Runs {@code pass} over {@code before}; the result must equal {@code expected} structurally. */
    static IRModule assertRewrites(Pass pass, String before, String expected) {
        PassResult r = run(pass, typed(before));
        IRModule want = typed(expected);
        StructuralEquality.diff(r.module(), want).ifPresent(m -> fail(pass.name() + " gave a different module\n" + m.message()
                + "\n--- Actual:\n" + RelayPrinter.print(r.module()) + "\n--- Expected:\n" + RelayPrinter.print(want)));
        if (!r.changed()) fail(pass.name() + " answered unchanged");
        return r.module();
    }

    static String meta(NDArray... constants) {
        StringBuilder sb = new StringBuilder("\n#[metadata]\n{\"relay.Constant\": [\n");
        for (int i = 0; i < constants.length; i++) {
            NDArray a = constants[i];
            sb.append("{\"dtype\": \"").append(a.dtype()).append("\", \"shape\": ").append(java.util.Arrays.toString(a.shape()))
                    .append(", \"data\": \"").append(Base64.getEncoder().encodeToString(a.toBytes())).append("\"}")
                    .append(i + 1 < constants.length ? ",\n" : "\n");
        }
        return sb.append("]}\n").toString();
    }

    static NDArray f32(int[] shape, double... values) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, values);
    }

    static NDArray spread(long seed, int... shape) {
        java.util.Random r = new java.util.Random(seed);
        double[] v = new double[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < v.length; i++) v[i] = Math.round((r.nextDouble() * 2 - 1) * 100) / 100.0;
        return f32(shape, v);
    }
}
