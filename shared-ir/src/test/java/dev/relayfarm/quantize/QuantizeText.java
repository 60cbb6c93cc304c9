package dev.relayfarm.quantize;

import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.passes.MetaText;
import dev.relayfarm.passes.Pass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassResult;
import dev.relayfarm.passes.Sequential;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
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
        return MetaText.of(constants);
    }

    static NDArray f32(int[] shape, double... values) {
        return MetaText.f32(shape, values);
    }

    static NDArray spread(long seed, int... shape) {
        return MetaText.spread(seed, shape);
    }
}
