package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.Arrays;
import java.util.List;

/**
 * Pass tests as text in, text out (TVM's before/after style): the input module is parsed, typed and
 * run through the named passes (forced, in debug mode: scoping and the "changed" answer are
 * checked); the expected text is parsed and typed too, and the two are compared structurally
 * (alpha-equivalence). A failure prints Actual and Expected in full plus the first difference.
 *
 * <p>{@code passes} is a comma-separated list of pass names, e.g. {@code "fold-constant,fuse-ops"}.
 */
public final class PassAssert {
    private PassAssert() {}

    /** Runs {@code passes} over {@code before}; the result must equal {@code expected} and report a change. */
    public static IRModule assertRewrites(String passes, String before, String expected) {
        PassResult r = run(passes, before);
        IRModule want = TypeInference.infer(RelayParser.parseModule(header(expected), "expected")).module();
        StructuralEquality.diff(r.module(), want).ifPresent(m -> fail("pass " + passes + " gave a different module\n"
                + m.message() + "\n--- Actual:\n" + RelayPrinter.print(r.module()) + "\n--- Expected:\n" + RelayPrinter.print(want)));
        assertTrue(r.changed(), "pass " + passes + " changed the module but answered changed=false");
        return r.module();
    }

    /** Runs {@code passes} over {@code text}; they must answer "unchanged" and return the input module object. */
    public static void assertUnchanged(String passes, String text) {
        IRModule in = TypeInference.infer(RelayParser.parseModule(header(text), "input")).module();
        PassResult r = run(passes, in);
        if (r.changed()) fail("pass " + passes + " changed a module it must leave alone:\n" + RelayPrinter.print(r.module()));
        assertFalse(r.changed());
        assertSame(in, r.module(), "answered unchanged but returned another module");
    }

    /**
     * Runs {@code passes} over {@code text} and checks with the interpreter that {@code @main} gives
     * the same values before and after on a few random inputs (rtol 1e-5, atol 1e-6).
     */
    public static IRModule assertSameResults(String passes, String text) {
        IRModule in = TypeInference.infer(RelayParser.parseModule(header(text), "input")).module();
        IRModule out = run(passes, in).module();
        for (long seed = 1; seed <= 3; seed++) {
            SameResults.assertSameResults(in, out, seed, new dev.relayfarm.interp.Tolerance(1e-5, 1e-6));
        }
        return out;
    }

    /** Parses and runs {@code passes} in debug mode; for tests that check a property of the output. */
    public static PassResult run(String passes, String text) {
        return run(passes, TypeInference.infer(RelayParser.parseModule(header(text), "input")).module());
    }

    public static PassResult run(String passes, IRModule module) {
        List<String> names = Arrays.stream(passes.split(",")).map(String::strip).toList();
        PassOptions options = PassOptions.level(0).withForced(java.util.Set.copyOf(names)).withValidate(true);
        Sequential seq = PassRegistry.sequential("test", names);
        // Required passes resolved into the pipeline are forced too, as the user named their dependent.
        options = options.withForced(seq.passes().stream().map(Pass::name).collect(java.util.stream.Collectors.toSet()));
        return seq.run(module, new PassContext(options));
    }

    private static String header(String text) {
        return text.strip().startsWith("#[version") ? text : "#[version = \"0.0.5\"]\n" + text;
    }
}
