package dev.relayfarm.cli;

import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.text.RelayParseException;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.Diagnostic;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeException;
import dev.relayfarm.types.TypeInference;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc infer FILE}: type-checks a Relay module and prints it with every global's full
 * signature and a {@code /* ty=... *}{@code /} comment on each binding; {@code --type-of @main}
 * prints only that global's function type, e.g.
 * {@code fn (Tensor[(10, 4), float32]) -> Tensor[(10, 4), float32]}. Warnings (non-exhaustive
 * {@code match}) go to stderr. Ill-typed or unparsable input: the diagnostics on stderr, exit 1.
 */
@Command(name = "infer", mixinStandardHelpOptions = true,
        description = "Type-check a Relay text file and print it with inferred types.")
public final class InferCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file, or - for standard input.")
    String file;

    @Option(names = "--type-of", paramLabel = "@GLOBAL", description = "Print only this global's function type.")
    String typeOf;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String source;
        try {
            source = file.equals("-")
                    ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            err.println("relayc infer: no such file: " + file);
            return 1;
        }
        String name = file.equals("-") ? "<stdin>" : file;
        IRModule module;
        try {
            module = RelayParser.parseModule(source, name);
        } catch (RelayParseException e) {
            err.println(e.getMessage());
            return 1;
        }
        InferResult result;
        try {
            result = TypeInference.infer(module);
        } catch (TypeException e) {
            for (Diagnostic d : e.diagnostics()) err.println(d);
            err.flush();
            return 1;
        }
        for (Diagnostic w : result.warnings()) err.println(w);
        err.flush();
        if (typeOf != null) {
            String global = typeOf.startsWith("@") ? typeOf.substring(1) : typeOf;
            FuncType t = result.globalTypes().get(new GlobalVar(global));
            if (t == null) {
                err.println("relayc infer: no global @" + global + " in " + name);
                return 1;
            }
            out.println(TypeFormat.format(t));
        } else {
            out.print(RelayPrinter.print(result.module(), RelayPrinter.Options.withTypes(result.types())));
        }
        out.flush();
        return 0;
    }
}
