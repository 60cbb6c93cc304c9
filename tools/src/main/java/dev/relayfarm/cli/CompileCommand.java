package dev.relayfarm.cli;

import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.quantize.qdq.QdqPairs;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.ScheduleFileException;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.ScheduleFile;
import dev.relayfarm.vm.VmArtifact;
import dev.relayfarm.vm.VmException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code relayc compile MODEL.onnx|FILE.relay --target "c -mcpu=native" -O3 -o DIR}: an artifact directory. */
@Command(name = "compile", mixinStandardHelpOptions = true,
        description = {"Compile a model to an artifact directory: manifest.json, lib.so (kernels + C graph executor),",
                "params.bin and the generated sources. Cross targets (-mtriple=...) without a cross compiler get sources only.",
                "A program the graph executor refuses (control flow, closures, recursion, ADTs) is compiled for the VM instead:",
                "manifest.json says \"executor\": \"vm\", vm.rfx holds the bytecode beside lib.so's kernels.",
                "Exit 0 on success, 2 on an error."})
public final class CompileCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MODEL", description = "an ONNX model (.onnx) or a Relay text file")
    Path file;

    @Option(names = "--target", defaultValue = CompileRequest.DEFAULT_TARGET, description = "target string (default \"${DEFAULT-VALUE}\"), e.g. \"c -mcpu=x86-64-v3\", \"c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72\"")
    String target;

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "" + CompileRequest.DEFAULT_OPT_LEVEL, description = "optimization level (" + OptLevels.FUSED_TEXT + ", default ${DEFAULT-VALUE}); fusion (-O1) is required")
    int optLevel;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224")
    List<String> shapes = List.of();

    @Option(names = "--schedules", paramLabel = "FILE.jsonl", description = {"stored schedules and/or tuning records, JSON lines: schedule lines (workload, config; optional status,",
            "target, device_class, cost_us, default_cost_us) and records (relayc tune -o; a workload_key field). Per workload the farm's rule picks",
            "(pinned, else approved and not slower than the default); a workload's best record applies only when measured faster than the default",
            "for this target, on this device class, with this C compiler; others use template defaults"})
    Path schedules;

    @Option(names = "--device-class", paramLabel = "CLASS", description = {"the device class the artifact is for (schedules and records measured on another one never apply);",
            "default: this machine's for a native target, \"" + Device.UNKNOWN_CLASS + "\" for a cross target (see relayc records stats)"})
    String deviceClass;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "DIR", description = "the artifact directory (created)")
    Path out;

    @Spec
    CommandSpec spec;

    @Option(names = "--winograd", paramLabel = "on|off", description = CommonOptions.WINOGRAD_HELP)
    String winograd;

    @Option(names = "--quantize", paramLabel = "PRECISION", description = {"int8: quantize after type inference, before optimizing (annotate, calibrate, realize,",
            "as relayc quantize; the calibration options below apply only with it); qdq: a QDQ ONNX model's own symmetric 8-bit",
            "QuantizeLinear/DequantizeLinear pairs and int8 weights on integer kernels, as ONNX Runtime runs them (nothing calibrated);",
            "default: compute as the model says (a QDQ model in float arithmetic)"})
    String quantize;

    @Mixin
    QuantizeOptions quantizeOptions;

    @Override
    public Integer call() {
        Optional<String> badWinograd = CommonOptions.winogradError(winograd);
        if (badWinograd.isPresent()) return CliErrors.report(spec, badWinograd.get());
        if (!CompileRequest.OPT_LEVELS.contains(optLevel)) {
            return CliErrors.report(spec, "-O must be " + CompileRequest.OPT_LEVELS + " for compile (the graph executor runs fused kernels), got " + optLevel);
        }
        if (quantize != null && !List.of("int8", "qdq").contains(quantize)) return CliErrors.report(spec, "--quantize must be int8 or qdq, got '" + quantize + "'");
        if (!"int8".equals(quantize)) {
            var mixin = spec.mixins().get("quantizeOptions");
            for (var option : spec.commandLine().getParseResult().matchedOptions()) {
                if (mixin.options().contains(option)) return CliErrors.report(spec, option.longestName() + " is a calibration option: it needs --quantize int8");
            }
        }
        try {
            Target t = Target.parse(target);
            long t0 = System.nanoTime();
            ModelSource source = ModelSource.read(file);
            String quantized = null;
            if ("qdq".equals(quantize)) {
                if (source.format() != ModelFormat.ONNX) return CliErrors.report(spec, "--quantize qdq reads a QDQ ONNX model; " + file + " is " + source.format());
                QdqPairs.Result marked = QdqPairs.mark(OnnxModels.parse(source.bytes(), source.name()), source.baseDir());
                source = new ModelSource(source.name(), source.format(), marked.model().toByteArray(), source.baseDir());
                if (marked.pairs() == 0) {
                    return CliErrors.report(spec, "--quantize qdq: " + file + " has no QuantizeLinear -> DequantizeLinear pair with one scale and a symmetric 8-bit range "
                            + "(zero point 0, or 128 for uint8) to run on integers; without --quantize it compiles as the float arithmetic it defines");
                }
                quantized = "the model's QDQ quantization, " + marked.pairs() + " activation pairs on integers";
            }
            CompileRequest request = new CompileRequest(source, t, optLevel, InputShapes.of(shapes));
            // the farm's stage functions, in one process: import, infer types and check executability, optimize, codegen
            IRModule module = Stages.inferTypes(Stages.importModel(request));
            if ("qdq".equals(quantize)) {
                module = Quantizer.realizeQdq(module, QuantizeConfig.Requantize.FIXED_POINT);
            } else if (quantize != null) {
                Quantizer.Result q = quantized(module);
                module = q.module();
                long wide = q.calibration().points().stream().filter(p -> p.nbit() > 8).count();
                quantized = quantizeOptions.calibration + " calibration, " + q.calibration().points().size() + " quantize points"
                        + (wide > 0 ? ", " + wide + " of them 16-bit tensors (mixed precision)" : "");
            }
            ArtifactCompiler.Artifact a;
            long t1;
            Map<String, ScheduleConfig> configs = Map.of();
            List<TuningTask> tasks = List.of();
            try {
                Stages.checkExecutable(module);
                IRModule optimized = Stages.optimize(module, request.optLevel(), request.target(), CommonOptions.disabledPasses(winograd));
                // the autotuner stage's choice: the rule over the file's schedules and records, for the module's tasks
                if (schedules != null) {
                    tasks = Stages.tasks(optimized, request.target());
                    configs = ScheduleFile.choose(schedules, tasks, request.target(), deviceClass);
                }
                t1 = System.nanoTime();
                a = Stages.codegen(optimized, request.compileOptions(configs), out);
            } catch (GraphException refused) {
                // control flow, closures, recursion, ADTs: the graph executor's refusal sends the program to the VM
                return compileForVm(module, request, refused, t0);
            }
            long t2 = System.nanoTime();
            var o = spec.commandLine().getOut();
            o.printf("compiled %s -> %s (target %s)%n", file, out, request.target());
            if (quantized != null) o.printf("  quantized (%s): %s%n", quantize, quantized);
            o.printf("  %d kernels, %d steps, %d params, arena %d bytes (intermediates %d bytes)%n", a.graph().kernels().size(), a.graph().steps().size(),
                    a.graph().params().size(), a.memory().arenaBytes(), a.graph().tempBytes());
            o.printf("  import+optimize %d ms, codegen+cc %d ms%n", (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
            if (schedules != null) o.printf("  schedules: %d of %d workloads tuned from %s%n", configs.size(), tasks.size(), schedules);
            a.note().ifPresent(n -> o.println("  note: " + n));
            o.println("  content hash " + a.contentHash());
            o.flush();
            return 0;
        } catch (GraphException | ArtifactException | ScheduleFileException | IllegalArgumentException e) {
            return CliErrors.reportUser(spec, e);
        } catch (IOException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        // Anything else (a parse, type or ONNX error; a compiler bug) is reported by CliErrors.
    }

    /** {@code typed} quantized as {@code --quantize} and the calibration options say; a calibration option without it is an error. */
    private Quantizer.Result quantized(IRModule typed) throws IOException {
        QuantizeConfig config = quantizeOptions.config();
        return Quantizer.quantize(typed, quantizeOptions.calibrationInputs(typed, config, file.toString()), config);
    }

    /** The VM artifact of {@code typed}, which the graph executor refused; both refusals are named when the VM cannot take it either. */
    private int compileForVm(IRModule typed, CompileRequest request, GraphException refused, long t0) {
        if (typed.main().isEmpty()) return CliErrors.reportUser(spec, refused); // nothing to run on either executor
        CompileOptions options = request.compileOptions(Map.of());
        VmArtifact.Written w;
        try {
            w = Stages.codegenVm(typed, options, out);
        } catch (VmException | dev.relayfarm.compile.UnsupportedKernelException e) {
            return CliErrors.report(spec, refused.getMessage() + "; the VM cannot run it either: " + e.getMessage());
        }
        long done = System.nanoTime();
        var o = spec.commandLine().getOut();
        o.printf("compiled %s -> %s (target %s, executor vm)%n", file, out, request.target());
        o.printf("  the graph executor refused it: %s%n", refused.getMessage());
        o.printf("  %d VM functions, %d instructions, %d kernels, %d constants%n", w.manifest().functions(), w.manifest().instructions(),
                w.manifest().kernels().size(), w.program().executable().constants().size());
        o.printf("  import+optimize+codegen+cc %d ms%n", (done - t0) / 1_000_000);
        if (schedules != null) o.println("  note: schedules are not applied to VM artifacts yet (issue 19); its kernels use template defaults");
        o.println("  content hash " + w.manifest().contentHash());
        o.flush();
        return 0;
    }
}
