package dev.relayfarm.cli;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.passes.Pass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassRecord;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.passes.Sequential;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc opt FILE.relay|MODEL.onnx [-O3] [--passes a,b] [--disable x] [--dump-after NAME]
 * [--timing]}: runs the optimization pipeline (or the named passes) and prints the optimized Relay
 * text. Dumps and the timing table go to stderr so stdout stays a valid Relay file. User errors
 * (unreadable or ill-typed input, unknown pass names) exit 1 naming the problem; a pass that breaks
 * its contract exits 2 naming the pass.
 */
@Command(name = "opt", mixinStandardHelpOptions = true,
        description = {"Optimize a Relay text file or an ONNX model and print the result as Relay text.",
                "-O0 runs nothing, -O1 fusion, -O2 + constant folding, -O3 everything in the standard pipeline."})
public final class OptCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", description = "Relay text file, or an ONNX model (.onnx).")
    Path file;

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "" + CompileRequest.DEFAULT_OPT_LEVEL, description = "optimization level (" + OptLevels.PIPELINE_TEXT + ", default ${DEFAULT-VALUE})")
    int level;

    @Option(names = "--passes", split = ",", paramLabel = "NAME", description = "run exactly these passes, in this order (and the passes they require), whatever -O says")
    List<String> passes = List.of();

    @Option(names = "--disable", split = ",", paramLabel = "NAME", description = "skip these passes")
    List<String> disabled = List.of();

    @Option(names = "--dump-before", split = ",", paramLabel = "NAME", description = "print the module before these passes to stderr ('all' for every pass)")
    List<String> dumpBefore = List.of();

    @Option(names = "--dump-after", split = ",", paramLabel = "NAME", description = "print the module after these passes to stderr ('all' for every pass)")
    List<String> dumpAfter = List.of();

    @Option(names = "--timing", description = "print a per-pass table (time, re-typing time, nodes before/after) to stderr")
    boolean timing;

    @Option(names = "--validate", description = "debug mode: check scoping and each pass's 'changed' answer after every pass")
    boolean validate;

    @Option(names = "--list", description = "list the passes (name, opt level, summary) and exit")
    boolean list;

    @Option(names = "--shape", paramLabel = "NAME=D0xD1x...", description = "ONNX input: bind the dynamic dims of graph input NAME (repeatable)")
    List<String> shapes = List.of();

    @Option(names = {"-o", "--output"}, paramLabel = "OUT", description = "write the Relay text here instead of standard output")
    Path output;


    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (list) {
                for (Pass p : PassRegistry.all()) out.printf("%-28s -O%d  %s%n", p.name(), p.info().optLevel(), p.info().summary());
                out.println("pipeline order: " + String.join(", ", OptPipeline.ORDER));
                out.flush();
                return 0;
            }
            if (file == null) throw new ModelInputException("missing FILE (a .relay file or an .onnx model)");
            Optional<String> badLevel = CommonOptions.optLevelError(level);
            if (badLevel.isPresent()) throw new ModelInputException(badLevel.get());
            IRModule module = load();
            Sequential pipeline = passes.isEmpty() ? OptPipeline.build() : PassRegistry.sequential("passes", passes);
            Set<String> known = new HashSet<>(pipeline.passes().stream().map(Pass::name).toList());
            for (String n : disabled) PassRegistry.get(n);
            PassOptions options = PassOptions.level(level)
                    .withDisabled(Set.copyOf(disabled))
                    .withForced(passes.isEmpty() ? Set.of() : known)
                    .withDumps(expand(dumpBefore, known), expand(dumpAfter, known))
                    .withValidate(validate);
            PassContext context = new PassContext(options, text -> {
                err.println(text);
                err.flush();
            });
            long t0 = System.nanoTime();
            IRModule result = pipeline.run(module, context).module();
            long total = System.nanoTime() - t0;
            if (timing) printTiming(err, context.records(), module, result, total);
            String text = RelayPrinter.print(result);
            if (output == null) {
                out.print(text);
                out.flush();
            } else {
                Files.writeString(output, text, StandardCharsets.UTF_8);
            }
            return 0;
        } catch (TypeException e) {
            StringBuilder sb = new StringBuilder(file + " does not type-check:");
            for (Diagnostic d : e.diagnostics()) sb.append('\n').append(d);
            return CliErrors.report(spec, sb.toString());
        } catch (PassException e) {
            // An unknown pass name is the user's; a pass that fails is ours (exit 2, as before).
            return CliErrors.report(spec, e.getMessage(), e.getMessage().startsWith("unknown pass") ? 1 : 2);
        }
    }

    private IRModule load() {
        return Stages.importModel(ModelFiles.read(file), InputShapes.of(shapes));
    }


    private static Set<String> expand(List<String> names, Set<String> known) {
        if (names.contains("all")) return known;
        for (String n : names) PassRegistry.get(n);
        return Set.copyOf(names);
    }

    private static void printTiming(PrintWriter err, List<PassRecord> records, IRModule before, IRModule after, long totalNanos) {
        err.printf("%-28s %10s %10s %10s %10s %8s%n", "pass", "pass ms", "retype ms", "nodes in", "nodes out", "changed");
        for (PassRecord r : records) {
            err.printf("%-28s %10.1f %10.1f %10d %10d %8s%n", r.name(), r.passNanos() / 1e6, r.inferNanos() / 1e6,
                    r.nodesBefore(), r.nodesAfter(), r.changed() ? "yes" : "no");
        }
        err.printf("%-28s %10.1f   (including the initial type check)%n", "total", totalNanos / 1e6);
        err.printf("nodes %d -> %d, primitive functions %d%n", ExprTraversal.countNodes(before), ExprTraversal.countNodes(after),
                primitiveFunctions(after));
        err.flush();
    }

    /** Fused groups: distinct functions marked Primitive, nested or global. */
    static int primitiveFunctions(IRModule module) {
        int n = 0;
        for (Function f : module.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof Function g && g.isPrimitive()) n++;
        }
        return n;
    }
}
