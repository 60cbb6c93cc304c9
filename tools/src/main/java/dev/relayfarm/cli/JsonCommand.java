package dev.relayfarm.cli;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.serde.BlobSink;
import dev.relayfarm.serde.BlobSource;
import dev.relayfarm.serde.BlobStoreException;
import dev.relayfarm.serde.FileSystemBlobStore;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.serde.IrJsonException;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc json FILE.relay} prints the module's JSON form ({@code relayfarm.ir} version 1, see
 * {@code schemas/README.md}); {@code relayc json --to-text FILE.json} prints a JSON document as Relay
 * text. Without {@code --blobs} every constant is inlined, so the output stands alone; with
 * {@code --blobs DIR} constants above {@code --inline-limit} bytes go to a file-system blob store in
 * DIR and the JSON references them by SHA-256 (and {@code --to-text} reads them from there). Exit 0 on
 * success, 1 with a diagnostic on stderr (Relay syntax error at file:line:col, JSON error at its JSON
 * path, missing or corrupt blob).
 */
@Command(name = "json", mixinStandardHelpOptions = true,
        description = "Convert Relay text to its versioned JSON form, or (--to-text) JSON back to Relay text.")
public final class JsonCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file (or a JSON file with --to-text); - reads standard input.")
    String file;

    @Option(names = "--to-text", description = "FILE is a JSON document: print it as Relay text.")
    boolean toText;

    @Option(names = "--blobs", paramLabel = "DIR",
            description = "Blob store directory: large constants are written there (and read from there with --to-text). Default: inline every constant.")
    Path blobs;

    @Option(names = "--inline-limit", paramLabel = "BYTES", defaultValue = "" + IrJson.Options.DEFAULT_INLINE_LIMIT,
            description = "With --blobs: constants larger than this many bytes go to the blob store (default: ${DEFAULT-VALUE}).")
    long inlineLimit;

    @Option(names = "--pretty", description = "Indent the JSON output.")
    boolean pretty;

    @Option(names = "--no-spans", description = "Leave source positions out of the JSON output.")
    boolean noSpans;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        String name = file.equals("-") ? "<stdin>" : file;
        String source = CliErrors.readText(file);
        FileSystemBlobStore store = blobs == null ? null : new FileSystemBlobStore(blobs);
        try {
            if (toText) {
                IRModule m = IrJson.read(source, store == null ? BlobSource.NONE : store);
                out.print(RelayPrinter.print(m));
            } else {
                IRModule m = RelayParser.parseModule(source, name);
                IrJson.Options options = new IrJson.Options(store == null ? Long.MAX_VALUE : inlineLimit, !noSpans, pretty);
                out.println(IrJson.write(m, store == null ? BlobSink.NONE : store, options));
            }
            out.flush();
            return 0;
        } catch (IrJsonException e) {
            return CliErrors.report(spec, name + ": " + e.getMessage() + (store == null && e.getMessage().contains("no blob source") ? " (use --blobs DIR)" : ""));
        } catch (BlobStoreException | IllegalArgumentException e) {
            return CliErrors.report(spec, name + ": " + e.getMessage());
        }
    }
}
