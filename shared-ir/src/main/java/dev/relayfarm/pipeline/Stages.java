package dev.relayfarm.pipeline;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.ExecutableCheck;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import dev.relayfarm.types.TypeInference;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The compile pipeline's stages as plain functions (ARCHITECTURE.md section 2): import, infer types,
 * optimize, list the tuning tasks, generate the artifact. {@code relayc compile} calls them in one
 * process; the farm's stage services call one each, with the IR in between serialized as JSON. No stage
 * logic lives anywhere else.
 *
 * <p>User errors (a bad model, an unsupported operator, a type error, bad options) are the shared-ir
 * {@link dev.relayfarm.diagnostic.CompileError}s; anything else is a compiler or environment fault.
 */
public final class Stages {
    private Stages() {}

    /** Import with a job's {@code shapes} field, the comma-joined form ({@code "x=1x3x224x224,y=1x10"}, blank for none). */
    public static IRModule importModel(ModelSource model, String shapes) {
        return importModel(model, shapes, ImportLimits.DEFAULT);
    }

    /** Import with a job's {@code shapes} field and the farm's limits; errors about the shapes name the {@code shapes} field. */
    public static IRModule importModel(ModelSource model, String shapes, ImportLimits limits) {
        return importModel(model, InputShapes.parse(shapes), limits, InputShapes.JOB);
    }

    /** Import what {@code relayc compile} was asked for ({@link #importModel(ModelSource, Map)} with its model and shapes). */
    public static IRModule importModel(CompileRequest request) {
        return importModel(request.model(), request.shapes());
    }

    /** Import with the CLI's {@code --shape} bindings and the default limits. */
    public static IRModule importModel(ModelSource model, Map<String, List<Long>> shapes) {
        return importModel(model, shapes, ImportLimits.DEFAULT, InputShapes.CLI);
    }

    /**
     * The model as an untyped-or-partly-typed module with {@code @main}. ONNX: the importer (constants
     * folded, {@code shapes} binding dynamic input dims). Relay text: the parser; shapes do not apply.
     * Then its inputs and constants are checked against {@code limits}; {@code shapesSource} is how errors
     * name the shapes ({@link InputShapes#JOB} or {@link InputShapes#CLI}).
     */
    public static IRModule importModel(ModelSource model, Map<String, List<Long>> shapes, ImportLimits limits, String shapesSource) {
        IRModule module = importUnchecked(model, shapes, shapesSource);
        limits.check(module, model.name(), shapes, shapesSource);
        return module;
    }

    private static IRModule importUnchecked(ModelSource model, Map<String, List<Long>> shapes, String shapesSource) {
        return switch (model.format()) {
            case ONNX -> OnnxImporter.importModel(OnnxModels.parse(model.bytes(), model.name()), model.name(), model.baseDir(),
                    ImportOptions.DEFAULT.withInputShapes(shapes));
            case RELAY -> {
                if (!shapes.isEmpty()) throw new ModelInputException("shapes-not-applicable", model.name() + ": " + shapesSource + " apply to ONNX models only, got " + InputShapes.format(shapes));
                yield RelayParser.parseModule(utf8(model), model.name());
            }
        };
    }

    private static String utf8(ModelSource model) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(model.bytes())).toString();
        } catch (CharacterCodingException e) {
            throw new ModelInputException("not-utf8", model.name() + ": a Relay text model must be UTF-8 text (" + e.getMessage() + ")");
        }
    }

    /** The module with every global's signature filled in; a {@link dev.relayfarm.types.TypeException} if it is ill-typed. */
    public static IRModule inferTypes(IRModule module) {
        return TypeInference.infer(module).module();
    }

    /**
     * Whether the graph executor can run {@code typed} (a module from {@link #inferTypes}) once optimized: a
     * {@link dev.relayfarm.compile.GraphException} naming what it certainly cannot run (no {@code @main}, recursion,
     * control flow on the inputs' values, references, ADT values, inputs of dynamic shape), so such a model fails at
     * type inference rather than at codegen. See {@link ExecutableCheck} for what it lets through.
     */
    public static void checkExecutable(IRModule typed) {
        ExecutableCheck.check(typed);
    }

    /** The executor an artifact is built for: the graph executor (static dataflow) or the Relay VM (everything else). */
    public enum Executor { GRAPH, VM }

    /**
     * Which executor runs {@code typed}: the graph executor when {@link #checkExecutable} lets it through, else the
     * VM (control flow, closures, recursion, ADTs), which compiles the typed module itself ({@link #codegenVm}) rather
     * than {@link #optimize}'s output. A module without {@code @main} runs on neither: its {@link
     * dev.relayfarm.compile.GraphException} stands.
     */
    public static Executor executor(IRModule typed) {
        try {
            ExecutableCheck.check(typed);
            return Executor.GRAPH;
        } catch (dev.relayfarm.compile.GraphException refused) {
            if (typed.main().isEmpty()) throw refused;
            return Executor.VM;
        }
    }

    /**
     * The VM artifact of {@code typed} (not optimized: the VM compiler runs the {@code -O} pipeline inside each
     * function itself): {@code vm.rfx} beside the kernels, manifest {@code "executor": "vm"}; a
     * {@link dev.relayfarm.vm.VmException} when the VM cannot run it either.
     */
    public static dev.relayfarm.vm.VmArtifact.Written codegenVm(IRModule typed, CompileOptions options, Path dir) {
        return dev.relayfarm.vm.VmArtifact.write(dev.relayfarm.vm.VmCompiler.compile(typed, options), options, dir);
    }

    /**
     * The standard pipeline at {@code -O<level>}, any level in {@link OptLevels#PIPELINE}, for {@code target} (its layout
     * blocking, see {@link Target#channelBlocks()}); from {@link OptLevels#FUSED} on, every operator call sits in a
     * Primitive function (what {@link #codegen} needs).
     */
    public static IRModule optimize(IRModule module, int optLevel, Target target) {
        return optimize(module, optLevel, target, java.util.Set.of());
    }

    /** {@link #optimize(IRModule, int, Target)} without the passes named in {@code disabled} (their names: {@code PassRegistry}). */
    public static IRModule optimize(IRModule module, int optLevel, Target target, java.util.Set<String> disabled) {
        if (!OptLevels.PIPELINE.contains(optLevel)) throw new ModelInputException(CompileRequest.INVALID_OPT_LEVEL, "opt level must be " + OptLevels.PIPELINE + ", got " + optLevel);
        return OptPipeline.optimize(module, optLevel, target, disabled);
    }

    /** {@link #optimize(IRModule, int, Target)} for the machine we run on ({@link Target#host()}). */
    public static IRModule optimize(IRModule module, int optLevel) {
        return optimize(module, optLevel, Target.host());
    }

    /**
     * The tuning tasks of an optimized module for {@code target} ({@link TuningTasks#extract}), in kernel order: the
     * workload keys {@link CompileOptions#schedules()} is looked up by during {@link #codegen}, each with its template,
     * config space and default configuration. Nothing is lowered: codegen lowers each kernel once, with its config.
     */
    public static List<TuningTask> tasks(IRModule optimized, Target target) {
        return TuningTasks.extract(optimized, target);
    }

    /** The artifact directory ({@link ArtifactCompiler}); pack it with {@link dev.relayfarm.artifact.ArtifactArchive#pack} to ship it. */
    public static ArtifactCompiler.Artifact codegen(IRModule optimized, CompileOptions options, Path dir) {
        return ArtifactCompiler.compile(optimized, options, dir);
    }
}
