package dev.relayfarm.cli;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.io.PrintWriter;
import java.util.Map;
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
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // Unreadable text, syntax and type errors are reported by CliErrors (relayc infer: ...).
        ModelSource source = ModelFiles.read(file);
        String name = source.name();
        IRModule module = Stages.importModel(source, Map.of());
        InferResult result = TypeInference.infer(module);
        for (Diagnostic w : result.warnings()) err.println(w);
        err.flush();
        if (typeOf != null) {
            String global = typeOf.startsWith("@") ? typeOf.substring(1) : typeOf;
            FuncType t = result.globalTypes().get(new GlobalVar(global));
            if (t == null) {
                return CliErrors.report(spec, "no global @" + global + " in " + name);
            }
            out.println(TypeFormat.format(t));
        } else {
            out.print(RelayPrinter.print(result.module(), RelayPrinter.Options.withTypes(result.types())));
        }
        out.flush();
        return 0;
    }
}
