package dev.relayfarm.vm;

import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.compile.KernelTable;
import dev.relayfarm.compile.UnsupportedKernelException;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.lower.DataDependentKernels;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.RowKernels;
import dev.relayfarm.kernel.lower.WidthKernels;
import dev.relayfarm.passes.LambdaLift;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compiles a whole Relay module (closures, recursion, ADTs, {@code if}, {@code match}) into an
 * {@link Executable} for the {@link VirtualMachine}: the VM compiler of the dissertation's chapter 5
 * (TVM's {@code relay/backend/vm/compiler.cc}).
 *
 * <p>Steps: the standard optimization pipeline at {@code -O1} or higher ({@link OptPipeline}; fuse-ops
 * turns operator calls into Primitive functions), then lambda-lift (every non-primitive nested function
 * becomes a global; one with free variables becomes a global returning a {@code Closure=1} function) and
 * A-normal form (every operand an atom, each shared value bound once), then bytecode per global
 * ({@link FunctionEmitter}). A call of a Primitive function becomes {@link Instruction.InvokePacked} of a
 * kernel lowered by the graph executor's kernel pipeline ({@link ArtifactCompiler#lower}); structurally
 * equal Primitive functions share one kernel and take the graph executor's names ({@code fused_add_0}:
 * {@link KernelTable}), so the two backends' kernel tables read alike. TVM's inline-primitives pass is not
 * needed: the emitter follows a let-bound Primitive function to its call sites itself.
 *
 * <p>A call whose results have a dynamic batch becomes a row kernel ({@link RowKernels}) after its shape function
 * (FunctionEmitter's rowsPacked); one with any other dynamic dimension (an image width, a sequence length) becomes a
 * width kernel ({@link WidthKernels}) after its shape function (FunctionEmitter's widthPacked); a call of an operator
 * whose result shape depends on values (arange, argwhere, unique, NMS) becomes a kernel of {@link DataDependentKernels},
 * sized before it runs or viewed with the shape it writes. Not done yet (issue 19): storage coalescing (each kernel
 * result gets its own {@link Instruction.AllocStorage}), and static kernels for empty tensors.
 */
public final class VmCompiler {
    private final IRModule module;
    private final InferResult types;
    private final CompileOptions options;
    private final Map<GlobalVar, Integer> functionIndex = new LinkedHashMap<>();
    private final List<VmFunction> functions = new ArrayList<>();
    private final Map<Constructor, Integer> constructorWrappers = new HashMap<>();
    private final List<NDArray> constants = new ArrayList<>();
    private final Map<NDArray, Integer> constantIndex = new IdentityHashMap<>();
    private final KernelTable kernels = new KernelTable();
    /** The kernels the emitter called with dynamic rows: told apart where the emitter has the call's types at hand. */
    private final java.util.Set<Integer> rowKernels = new java.util.HashSet<>();
    /** The kernels the emitter called with a dynamic size beyond a leading batch (kernel/lower/WidthKernels). */
    private final java.util.Set<Integer> widthKernels = new java.util.HashSet<>();
    /** Answers of {@link #rowsStayApart} by kernel, and {@link #widthShapeFunction}'s kernels by (kernel, rank, dim). */
    private final Map<Integer, Boolean> rowSeparable = new HashMap<>();
    private final Map<List<Integer>, Integer> widthShapeFunctions = new HashMap<>();

    private VmCompiler(IRModule module, CompileOptions options) {
        this.module = module;
        this.types = TypeInference.infer(module);
        this.options = options;
    }

    /** {@code module} (as written or imported: this runs the optimizer) compiled for the VM with {@code options}. */
    public static VmProgram compile(IRModule module, CompileOptions options) {
        return new VmCompiler(prepare(module, options), options).emitAll();
    }

    /** The module the bytecode is emitted from: optimized at {@code -O1} or more (fusion is what makes kernels), lambda-lifted, in A-normal form. */
    public static IRModule prepare(IRModule module, CompileOptions options) {
        int level = Math.max(1, options.optLevel());
        IRModule optimized = OptPipeline.optimize(module, level, options.target());
        PassContext context = new PassContext(PassOptions.level(level).withTarget(options.target()));
        return PassRegistry.sequential("vm-prepare", List.of("lambda-lift", "to-a-normal-form")).run(optimized, context).module();
    }

    private VmProgram emitAll() {
        if (module.main().isEmpty()) throw new VmException("the module has no @main");
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            if (e.getValue().isPrimitive()) continue;
            functionIndex.put(e.getKey(), functionIndex.size());
            functions.add(null);
        }
        for (Map.Entry<GlobalVar, Integer> e : functionIndex.entrySet()) {
            functions.set(e.getValue(), new FunctionEmitter(this, e.getKey().name()).emitGlobal(module.lookup(e.getKey())));
        }
        List<ConstructorTag> tags = new ArrayList<>();
        for (TypeData td : module.types().values()) {
            for (Constructor c : td.constructors()) tags.add(new ConstructorTag(td.name(), c.name(), c.tag(), c.inputs().size()));
        }
        List<LoweredKernel> lowered = new ArrayList<>();
        for (GraphPlan.Kernel k : kernels.kernels()) {
            try {
                int at = lowered.size();
                if (DataDependentKernels.handles(k.primitive())) lowered.add(DataDependentKernels.lower(k.primitive(), k.name()));
                else if (rowKernels.contains(at)) lowered.add(RowKernels.lower(k.primitive(), k.name(), options.target()));
                else if (widthKernels.contains(at)) lowered.add(WidthKernels.lower(k.primitive(), k.name(), options.target()));
                else lowered.add(ArtifactCompiler.lower(k, options));
            } catch (UnsupportedOperationException e) {
                throw new UnsupportedKernelException(k.name(), e);
            }
        }
        Executable exe = new Executable(functions, constants, lowered.stream().map(LoweredKernel::signature).toList(), tags);
        List<Manifest.Tensor> inputs = new ArrayList<>();
        for (Var p : module.main().orElseThrow().params()) {
            Type t = types.typeOf(p);
            inputs.add(t instanceof TensorType tt && tt.isStatic()
                    ? new Manifest.Tensor(p.name(), java.util.Arrays.stream(tt.staticShape()).boxed().toList(), tt.dtype().toString())
                    : new Manifest.Tensor(p.name(), null, t.toString()));
        }
        return new VmProgram(exe, lowered, inputs);
    }

    // ---------------------------------------------------------------- what the function emitter asks for

    IRModule module() {
        return module;
    }

    InferResult types() {
        return types;
    }

    /** The VM function of global {@code gv}; a Primitive global is a kernel, not a function. */
    int functionOf(GlobalVar gv) {
        Integer i = functionIndex.get(gv);
        if (i == null) throw new VmException("no VM function for @" + gv.name() + " (unknown or Primitive global)");
        return i;
    }

    /**
     * The inner function when {@code @g(captured...)} builds a closure, else null: lambda-lift made
     * {@code @g}'s body a function marked {@code Closure=1} (A-normal form may have bound it:
     * {@code let %f = fn (..., Closure=1) {...}; %f}). The VM compiles such a global as one function over
     * the captured values and then the inner function's parameters.
     */
    static Function closureOf(Function global) {
        Expr body = global.body();
        if (body instanceof Let l && l.body() == l.var()) body = l.value();
        return body instanceof Function inner && inner.attrs().get(LambdaLift.CLOSURE).map(v -> v instanceof AttrValue.IntValue(long i) && i != 0).orElse(false)
                ? inner : null;
    }

    static boolean buildsClosure(Function global) {
        return closureOf(global) != null;
    }

    int constant(NDArray value) {
        return constantIndex.computeIfAbsent(value, v -> {
            constants.add(v);
            return constants.size() - 1;
        });
    }

    /** The kernel of Primitive function {@code f}, shared with every structurally equal one. */
    int kernel(Function f) {
        return kernels.indexOf(f);
    }

    /** {@link #kernel} for a group whose results have a dynamic batch: it is lowered as a row kernel ({@link RowKernels}). */
    int rowKernel(Function f) {
        int k = kernels.indexOf(f);
        rowKernels.add(k);
        return k;
    }

    /** {@link #kernel} for a group with a dynamic size beyond a leading batch: it is lowered as a width kernel ({@link WidthKernels}). */
    int widthKernel(Function f) {
        int k = kernels.indexOf(f);
        widthKernels.add(k);
        return k;
    }

    /** Whether the group of {@code f} is a row kernel's ({@link RowKernels#rowsStayApart}), asked once per kernel rather than per call. */
    boolean rowsStayApart(Function f) {
        return rowSeparable.computeIfAbsent(kernels.indexOf(f), k -> RowKernels.rowsStayApart(f));
    }

    /**
     * The kernel of the shape function of width kernel {@code f} reading its size at dimension {@code dim} of a rank-{@code rank}
     * shape ({@link WidthKernels#shapeFunction}: many lowerings and inferences), built once per kernel and reading; {@code where}
     * names the first call site in its errors.
     */
    int widthShapeFunction(Function f, String where, int rank, int dim) {
        List<Integer> key = List.of(kernels.indexOf(f), rank, dim);
        Integer known = widthShapeFunctions.get(key);
        if (known == null) {
            known = kernels.indexOf(WidthKernels.shapeFunction(f, where, options.target(), rank, dim));
            widthShapeFunctions.put(key, known);
        }
        return known;
    }

    /** A function {@code fn(%0, ..., %n-1) { C(%0, ..., %n-1) }}: a constructor with fields used as a value, e.g. passed to @map. */
    int constructorWrapper(Constructor c) {
        Integer known = constructorWrappers.get(c);
        if (known != null) return known;
        int n = c.inputs().size();
        List<Integer> fields = new ArrayList<>();
        for (int i = 0; i < n; i++) fields.add(i);
        functions.add(new VmFunction("constructor " + c.name(), n, n + 1, List.of(new Instruction.AllocADT(c.tag(), fields, n), new Instruction.Ret(n))));
        constructorWrappers.put(c, functions.size() - 1);
        return functions.size() - 1;
    }
}
