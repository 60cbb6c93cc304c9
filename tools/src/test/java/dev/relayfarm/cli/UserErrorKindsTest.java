package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.compile.ArtifactLimitException;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.compile.UnsupportedKernelException;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.ImportError;
import dev.relayfarm.diagnostic.InputError;
import dev.relayfarm.diagnostic.LimitError;
import dev.relayfarm.diagnostic.TypeCheckError;
import dev.relayfarm.diagnostic.UnsupportedError;
import dev.relayfarm.frontend.OnnxFormatException;
import dev.relayfarm.frontend.UnsupportedOpException;
import dev.relayfarm.ir.Span;
import dev.relayfarm.kernel.target.TargetException;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.pipeline.InputShapeException;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.text.RelayParseException;
import dev.relayfarm.types.TypeException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Every kind of {@link CompileError} is a user error to relayc: one line with the message as thrown, exit 1, and
 * under {@code --verbose} a second line with the diagnostic code.
 */
class UserErrorKindsTest {
    enum Kind { IMPORT, TYPE_CHECK, UNSUPPORTED, INPUT, LIMIT }

    /** No default: a new kind does not compile until it is listed here (and so tested). */
    static Kind kind(CompileError e) {
        return switch (e) {
            case ImportError i -> Kind.IMPORT;
            case TypeCheckError t -> Kind.TYPE_CHECK;
            case UnsupportedError u -> Kind.UNSUPPORTED;
            case InputError i -> Kind.INPUT;
            case LimitError l -> Kind.LIMIT;
        };
    }

    /** One exception the library throws per code, each with the code its diagnostic must carry. */
    static final Map<RuntimeException, String> EXAMPLES = Map.ofEntries(
            Map.entry(new RelayParseException("m.relay", 3, 12, "unbound variable %y", "  %0 = add(%x, %y);"), "relay-syntax"),
            Map.entry(new OnnxFormatException("m.onnx: not a valid ONNX model"), "onnx-malformed"),
            Map.entry(new UnsupportedOpException("m.onnx: node n1: Loop is not supported", "Loop"), "onnx-unsupported"),
            Map.entry(new TypeException(List.of(Diagnostic.error("type-mismatch", new Span("m.relay", 2, 5), "main", "expected float32, got int32"))), "type-mismatch"),
            Map.entry(new RelationException("axis must be in [-3, 2], got 5"), "relation-violated"),
            Map.entry(new GraphException("@main: if on an input's value"), "not-executable"),
            Map.entry(new UnsupportedKernelException("fused_add", new UnsupportedOperationException("add: dtype float16 is not supported")), "unsupported-kernel"),
            Map.entry(new ModelInputException("no-such-file", "no such file: m.relay"), "no-such-file"),
            Map.entry(new TargetException("unknown target kind 'cuda'"), "invalid-target"),
            Map.entry(rejected("x=1x0"), "invalid-shapes"),
            Map.entry(new ArtifactLimitException("the model needs 70000 kernels, the limit is 65536"), "artifact-limit"));

    private static InputShapeException rejected(String bad) {
        try {
            InputShapes.parse(bad);
        } catch (InputShapeException e) {
            return e;
        }
        throw new AssertionError(bad + " was accepted");
    }

    @Test
    void everyKindExitsWithOneAndItsCodeUnderVerbose() {
        Set<Kind> seen = EnumSet.noneOf(Kind.class);
        EXAMPLES.forEach((e, code) -> {
            CompileError error = (CompileError) e;
            seen.add(kind(error));
            assertEquals(code, error.diagnostic().code(), e.getClass().getSimpleName());
            for (boolean verbose : new boolean[] {false, true}) {
                StringWriter err = new StringWriter();
                CommandLine cmd = Relayc.commandLine();
                cmd.setErr(new PrintWriter(err, true));
                CommandLine.ParseResult parsed = cmd.parseArgs(verbose ? new String[] {"parse", "x.relay", "--verbose"} : new String[] {"parse", "x.relay"});
                assertEquals(1, CliErrors.handle(e, cmd.getSubcommands().get("parse"), parsed), e.getClass().getSimpleName());
                String expected = "relayc parse: " + e.getMessage() + "\n" + (verbose ? "relayc parse: error code " + code + "\n" : "");
                assertEquals(expected, err.toString());
            }
        });
        assertEquals(EnumSet.allOf(Kind.class), seen, "an example of every kind");
    }

    @Test
    void compileReportsItsUserErrorsWithExitTwoAndTheCodeUnderVerbose(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("m.relay");
        Files.writeString(model, "def @main(%x: Tensor[(2), float32]) { add(%x, %x) }\n");
        CliRun r = CliRun.relayc("compile", model.toString(), "--target", "c -mcpu=pentium9", "-o", dir.resolve("out").toString(), "--verbose");
        assertEquals(2, r.exitCode(), r.err());
        String[] lines = r.err().split("\n");
        assertEquals(2, lines.length, r.err());
        assertEquals("relayc compile: error code invalid-target", lines[1]);
    }
}
