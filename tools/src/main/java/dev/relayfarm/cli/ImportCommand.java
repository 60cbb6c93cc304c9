package dev.relayfarm.cli;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc import model.onnx [--shape NAME=1x3x224x224 ...] [-o out.relay]}: imports an ONNX
 * model and prints it as Relay text (what {@code relayc parse} / {@code relayc infer} read back).
 * The module is type-checked before it is written, so a model that imports but does not type-check
 * is an error, not a file that fails later. Errors (unsupported operator, malformed model, a
 * {@code --shape} that does not fit) go to stderr naming the model and node, exit 1.
 */
@Command(name = "import", mixinStandardHelpOptions = true,
        description = "Import an ONNX model and print it as Relay text.")
public final class ImportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "ONNX model file (.onnx).")
    Path model;

    @Option(names = "--shape", paramLabel = "NAME=D0xD1x...",
            description = "Bind the dynamic dims of graph input NAME (repeatable), e.g. data=1x3x224x224; ? keeps a dim dynamic (x=1x3x48x?).")
    List<String> shapes = List.of();

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write the Relay text here instead of standard output.")
    Path output;

    @Override
    public Integer call() throws IOException {
        Map<String, List<Long>> bound = InputShapes.of(shapes);
        if (!Files.isRegularFile(model)) {
            return CliErrors.report(spec, "no such file: " + model);
        }
        IRModule module;
        try {
            module = Stages.importModel(ModelFiles.read(model), bound);
            Stages.inferTypes(module);
        } catch (TypeException e) {
            StringBuilder sb = new StringBuilder(model + ": the imported module does not type-check:");
            for (Diagnostic d : e.diagnostics()) sb.append('\n').append(d);
            return CliErrors.report(spec, sb.toString());
        }
        String text = RelayPrinter.print(module);
        if (output == null) {
            PrintWriter out = spec.commandLine().getOut();
            out.print(text);
            out.flush();
        } else {
            Files.writeString(output, text, StandardCharsets.UTF_8);
        }
        return 0;
    }
}
