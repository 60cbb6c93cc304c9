package dev.relayfarm.cli;

import dev.relayfarm.ad.GradientException;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.interp.InterpreterException;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.serde.BlobStoreException;
import dev.relayfarm.serde.IrJsonException;
import dev.relayfarm.types.TypeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine;

/**
 * The one place {@code relayc} commands report errors, so every command reads the same:
 *
 * <pre>
 * relayc parse: model.relay:3:12: unbound variable %y
 *   %0 = add(%x, %y);
 *                ^
 * relayc run: no such file: model.relay
 * relayc infer: junk.bin: not UTF-8 text at byte 0
 * relayc opt: internal error: StackOverflowError — a compiler bug, or an input past a limit; rerun with --verbose for the stack trace
 * </pre>
 *
 * User errors exit with 1 ({@code check}, {@code compile}, {@code conformance}, {@code bench} and {@code vta},
 * where 1 means "ran, but the results differ", use 2); anything else escaping a command — a compiler
 * bug, StackOverflowError, OutOfMemoryError — is an internal error, one line and exit code
 * {@value #INTERNAL_ERROR} ({@code EX_SOFTWARE} of sysexits.h), with the stack trace only under
 * {@code --verbose}.
 */
final class CliErrors {
    private CliErrors() {}

    /** Exit code of an internal error: distinct from every command's user-error and mismatch codes. */
    static final int INTERNAL_ERROR = 70;

    /** Commands whose exit code 1 means a mismatch, so their user errors exit with 2. */
    private static final Set<String> ONE_MEANS_MISMATCH = Set.of("check", "compile", "conformance", "bench", "vta");

    /** The exit code for a user error of the command {@code spec}. */
    static int userErrorCode(CommandSpec spec) {
        return ONE_MEANS_MISMATCH.contains(spec.name()) ? 2 : 1;
    }

    /** Prints {@code relayc <cmd>: message} on the command's stderr and returns the user-error exit code. */
    static int report(CommandSpec spec, String message) {
        return report(spec, message, userErrorCode(spec));
    }

    /** {@link #report(CommandSpec, String)} with an explicit exit code. */
    static int report(CommandSpec spec, String message, int code) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("relayc " + spec.name() + ": " + message);
        err.flush();
        return code;
    }

    /**
     * The message of a user error, or null when {@code t} is not one (then it is an internal error). User errors are the
     * library's {@link CompileError}s, which fail a farm job the same way, and the failures that are the user's only
     * because relayc was handed the input directly (an IR JSON file, a blob, an {@code .npy} array, an artifact
     * directory, a program that fails when run, a pass name): in the farm those inputs are the farm's own.
     */
    static String userMessage(Throwable t) {
        return switch (t) {
            case TypeException e -> {
                // Each diagnostic on its own line, the first right after the prefix: file:line:col: ...
                StringBuilder sb = new StringBuilder();
                for (Diagnostic d : e.diagnostics()) sb.append(sb.isEmpty() ? "" : "\n").append(d);
                yield sb.isEmpty() ? e.getMessage() : sb.toString();
            }
            case CompileError e -> e.getMessage();
            case IrJsonException e -> e.getMessage();
            case InterpreterException e -> e.getMessage();
            case Npy.NpyException e -> e.getMessage();
            case BlobStoreException e -> e.getMessage();
            case ArtifactException e -> e.getMessage();
            case GradientException e -> e.getMessage();
            case PassException e when e.getMessage() != null && e.getMessage().startsWith("unknown pass") -> e.getMessage();
            default -> null;
        };
    }

    /**
     * Reports a user error a command caught itself, as {@link #handle} reports the ones that escape: its message, and
     * under {@code --verbose} the diagnostic code of a {@link CompileError}.
     */
    static int reportUser(CommandSpec spec, RuntimeException e) {
        int code = report(spec, e.getMessage());
        CommandLine.ParseResult parsed = spec.root().commandLine().getParseResult();
        if (parsed != null && parsed.originalArgs().contains("--verbose")) reportCode(spec, e);
        return code;
    }

    /** {@code relayc <cmd>: error code <code>} when {@code t} is a {@link CompileError}: what a script may branch on. */
    private static void reportCode(CommandSpec spec, Throwable t) {
        if (t instanceof CompileError e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("relayc " + spec.name() + ": error code " + e.diagnostic().code());
            err.flush();
        }
    }

    /**
     * Reads a source file ({@code -} for standard input) as UTF-8, strictly: text with malformed
     * bytes is a {@link ModelInputException} naming the first bad byte, not a MalformedInputException trace.
     */
    static String readText(String file) {
        byte[] bytes;
        try {
            bytes = file.equals("-") ? System.in.readAllBytes() : Files.readAllBytes(Path.of(file));
        } catch (NoSuchFileException e) {
            throw new ModelInputException("no-such-file", "no such file: " + file);
        } catch (IOException e) {
            throw new ModelInputException("cannot read " + file + ": " + e.getMessage());
        }
        return decodeUtf8(bytes, file.equals("-") ? "<stdin>" : file);
    }

    static String readText(Path file) {
        return readText(file.toString());
    }

    /** {@code bytes} as UTF-8 text, or a {@link ModelInputException} "NAME: not UTF-8 text at byte N". */
    static String decodeUtf8(byte[] bytes, String name) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 16, bytes.length + 1L));
        CoderResult r = decoder.decode(in, out, true);
        if (r.isError()) throw new ModelInputException("not-utf8", name + ": not UTF-8 text at byte " + in.position());
        r = decoder.flush(out);
        if (r.isError()) throw new ModelInputException("not-utf8", name + ": not UTF-8 text at byte " + in.position());
        return out.flip().toString();
    }

    /**
     * Runs the parsed command and turns whatever escapes it into the one-line reports above; picocli
     * itself would print a stack trace for an exception and let an Error (StackOverflowError,
     * OutOfMemoryError) escape {@code execute}.
     */
    static int execute(CommandLine.ParseResult parseResult) {
        try {
            return new CommandLine.RunLast().execute(parseResult);
        } catch (CommandLine.ExecutionException e) {
            return handle(e.getCause() == null ? e : e.getCause(), e.getCommandLine(), parseResult);
        } catch (CommandLine.ParameterException e) {
            throw e; // picocli reports usage errors itself
        } catch (Throwable t) {
            return handle(t, last(parseResult), parseResult);
        }
    }

    private static CommandLine last(CommandLine.ParseResult parseResult) {
        CommandLine.ParseResult p = parseResult;
        while (p.subcommand() != null) p = p.subcommand();
        return p.commandSpec().commandLine();
    }

    static int handle(Throwable t, CommandLine cmd, CommandLine.ParseResult parseResult) {
        CommandSpec spec = cmd.getCommandSpec();
        boolean verbose = parseResult != null && parseResult.originalArgs().contains("--verbose");
        String user = userMessage(t);
        if (user != null) {
            int code = report(spec, user);
            if (verbose) reportCode(spec, t);
            return code;
        }
        String what = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + firstLine(t.getMessage()));
        String hint = t instanceof StackOverflowError
                ? " — an input nested too deeply or a compiler bug; run it on a larger stack (RELAYC_JAVA_OPTS=-Xss64m) or report it"
                : t instanceof OutOfMemoryError
                        ? " — the input needs more memory than the JVM has (RELAYC_JAVA_OPTS=-Xmx8g)"
                        : " — a compiler bug; please report it";
        report(spec, "internal error: " + what + hint + (verbose ? "" : " (--verbose prints the stack trace)"), INTERNAL_ERROR);
        if (verbose) {
            PrintWriter err = spec.commandLine().getErr();
            t.printStackTrace(err);
            err.flush();
        }
        return INTERNAL_ERROR;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
