package dev.relayfarm.vm;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.HostBuffers;
import dev.relayfarm.runtime.KernelBatch;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.runtime.NativeKernel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs an {@link Executable}: the dissertation's VM interpreter loop, in Java, calling the kernels of a
 * {@link KernelLibrary} through the Foreign Function & Memory API.
 *
 * <p><b>Why Java first.</b> The tuner, the farm's services and {@code relayc} are Java and already load
 * kernels over FFM ({@link dev.relayfarm.runtime.CompiledModel}); a Java loop runs in all of them today,
 * with the JVM's errors and profiler, and the bytecode stays one definition ({@link Instruction}) instead
 * of two. The dispatch cost per instruction is small next to a kernel call. A C loop, so a VM artifact
 * also runs without a JVM as the graph executor's does, can come later from the same serialized
 * executable ({@link ExecutableFormat}).
 *
 * <p><b>No Java recursion per Relay call.</b> {@link Instruction.Invoke} and {@link Instruction.InvokeClosure}
 * push a {@link Frame} on an explicit stack and {@link Instruction.Ret} pops it, so a Relay program that
 * recurses 100,000 deep needs heap, not Java stack; {@link VmOptions} bounds it with an error naming the function.
 * A call directly followed by the Ret of its result (the compiler emits one for every call in tail position)
 * reuses the caller's place on the stack, so tail-recursive loops run in constant stack.
 *
 * <p><b>Memory.</b> Tensors live in native memory the VM keeps between runs ({@link RunMemory}): each
 * {@link #invoke run} allocates from the start again, so results are copied to the heap before it returns;
 * constants are copied to native memory once, when the VM is made. Within a run, a kernel result's block is
 * reused after its last read when it never escapes ({@link StorageKills}, best fit: {@link FreeBlocks}); others stay
 * until the run ends. A run that repeats the one before it (a static model's) is planned like the graph
 * executor's arena and later runs are served from the plan while they repeat it ({@link RunPlan}). Not
 * thread-safe: one VM per thread.
 *
 * <p><b>Per instruction.</b> What a static instruction needs beyond its operands (a LoadConsti's scalar, an
 * AllocTensor's int shape and size, an InvokePacked's unboxed registers) is derived once when the VM is made
 * ({@link LoadedFunction}), so a kernel call costs the loop no allocation but its tensor views.
 *
 * <p><b>Kernel calls in batches.</b> An InvokePacked queues its call ({@link KernelBatch}) instead of crossing into
 * native code on its own; the queue runs, in order, with one native call when the loop is about to read memory a
 * queued call writes (an If's condition, a size or shape read from a tensor), to write memory a queued call touches,
 * at a DeviceCopy, at the run's result, or when the queue is full. Kernels of a few integers in and out (shape
 * functions, integer length kernels) are remembered by their inputs, so the sizes and shapes a dynamic model reads are known without running
 * the queue at sizes seen before, and ShapeOf's results are kept like constants. The
 * instructions in between (allocations, kills, moves, calls, ADTs) touch no tensor data, so the kernels see memory as
 * they would have called one by one: a block killed and reused in between is written by a later call, which runs
 * after the earlier ones that read it. A static model's run is then one native call for all its kernels, as in the
 * graph executor, and a dynamic batch's too once its sizes are known. A library built without the batch entry gets
 * its calls one by one.
 */
public final class VirtualMachine implements AutoCloseable {
    private final Executable executable;
    private final Optional<KernelLibrary> library;
    private final NativeKernel[] kernels;
    /** The kernel calls queued and not yet run; empty when the library has no batch entry (calls run one by one). */
    private final Optional<KernelBatch> batch;
    /** For each queued call, where it was queued ({@code function << 32 | pc}): a failing call's error names its instruction. */
    private final long[] queuedAt;
    /**
     * The memory the queued calls read and write, one range per buffer, and whether a call writes it: the loop flushes
     * before it reads what a queued call writes or writes what one touches, and only then (a dynamic batch's sizes,
     * read once per row count, would otherwise cost a native call per kernel).
     */
    private final long[] queuedStart = new long[(int) BATCH_POINTERS], queuedEnd = new long[(int) BATCH_POINTERS];
    private final boolean[] queuedWrite = new boolean[(int) BATCH_POINTERS];
    private int queuedRanges;
    /** Each function's code with what its instructions need prepared once ({@link LoadedFunction}). */
    private final LoadedFunction[] functions;
    private final Arena constantArena = Arena.ofShared();
    private final VmObject.Tensor[] constants;
    private final Map<Long, VmObject.Tensor> smallInts = new HashMap<>();
    /** ShapeOf's results by shape ({@link #shapeTensor}), in their own arena. */
    private final Map<java.nio.IntBuffer, VmObject.Tensor> shapes = new HashMap<>();
    private Arena shapeArena = Arena.ofShared();
    /** At most this many shapes are kept within a run; a run that starts with that many starts them afresh. */
    static final int KEPT_SHAPES = 4096;
    private final RunMemory memory;
    /**
     * Per kernel, the array of argument pointers it is called with: filled anew at each call, allocated once. Seen
     * through a global-scope segment of the same address: a downcall acquires and releases the shared arena of every
     * segment it is passed (an atomic update each, per kernel call); this memory lives until {@link #close}, after
     * which no kernel runs.
     */
    private final MemorySegment[] kernelArgs;
    /** Per kernel, its parameters of dynamic shape (a row or width kernel's), for {@link #checkDynamic}. */
    private final int[][] dynamicParams;
    /** Per kernel, whether it is a width kernel (kernel/lower/WidthKernels: its last input is named {@code size}), for {@link #checkDynamic}. */
    private final boolean[] sizeKernel;
    /**
     * Per kernel of a few integers in and out (a shape function, an integer length kernel; null for the others, and for
     * all of them without a queue), its results by its inputs' bytes ({@link #rememberedQueued}).
     */
    private final Map<java.nio.ByteBuffer, MemorySegment[]>[] remembered;
    /**
     * The results of remembered calls still in the queue, by tensor: what the loop reads of them (a size, a shape) without
     * running the queue first. Emptied when the queue runs (memory then holds them) and when a run starts.
     */
    private final Map<VmObject.Tensor, VmObject.Tensor> known = new java.util.IdentityHashMap<>();
    /** How many times the queue has run a call or more, for tests. */
    private long queueRuns;
    /** The tensors of the kernel call in progress (tuples flattened) and their buffers, reused from call to call. */
    private final ArrayList<VmObject.Tensor> packedTensors = new ArrayList<>();
    private final ArrayList<MemorySegment> packedBuffers = new ArrayList<>();
    private final VmOptions options;

    /** The most bytes a kernel's tensors may have in all for its results to be remembered, and how many inputs it keeps. */
    static final int REMEMBERED_BYTES = 1024, REMEMBERED_INPUTS = 64;

    /** Kernel calls a batch holds, and their buffers in all: a run of a few hundred kernels flushes once or twice. */
    static final int BATCH_CALLS = 256;
    static final long BATCH_POINTERS = 4096;

    /** A VM for {@code executable}, whose kernels are in {@code library} (empty when it calls none); the VM closes the library. */
    public VirtualMachine(Executable executable, Optional<KernelLibrary> library) {
        this(executable, library, VmOptions.DEFAULT);
    }

    public VirtualMachine(Executable executable, Optional<KernelLibrary> library, VmOptions options) {
        this.executable = executable;
        this.library = library;
        this.options = options;
        this.memory = new RunMemory(constantArena, options.maxRunBytes());
        this.batch = library.flatMap(l -> l.batch(BATCH_CALLS, BATCH_POINTERS));
        this.queuedAt = new long[BATCH_CALLS];
        this.kernels = new NativeKernel[executable.kernels().size()];
        this.kernelArgs = new MemorySegment[kernels.length];
        this.dynamicParams = new int[kernels.length][];
        this.sizeKernel = new boolean[kernels.length];
        @SuppressWarnings("unchecked")
        Map<java.nio.ByteBuffer, MemorySegment[]>[] memo = new Map[kernels.length];
        this.remembered = memo;
        this.functions = new LoadedFunction[executable.functions().size()];
        this.constants = new VmObject.Tensor[executable.constants().size()];
        try {
            BytecodeVerifier.verify(executable);
            for (int i = 0; i < kernels.length; i++) {
                KernelSignature sig = executable.kernels().get(i);
                KernelLibrary lib = library.orElseThrow(() -> new VmException("the executable calls kernel " + sig.name() + " but no kernel library was given"));
                kernels[i] = lib.kernel(sig.name());
                if (!kernels[i].signature().equals(sig)) {
                    throw new VmException("kernel " + sig.name() + " in the library has signature " + kernels[i].signature() + ", the executable expects " + sig);
                }
                dynamicParams[i] = java.util.stream.IntStream.range(0, sig.params().size()).filter(p -> sig.params().get(p).isDynamic()).toArray();
                if (dynamicParams[i].length > 0) {
                    TensorSpec rows = sig.numInputs() > 0 ? sig.params().get(sig.numInputs() - 1) : null;
                    if (rows == null || !rows.dtype().equals(DType.INT64) || !rows.shape().equals(List.of(1))) {
                        throw new VmException("kernel " + sig.name() + " has parameters of dynamic shape but no row count (an int64 [1] input last): " + sig);
                    }
                    sizeKernel[i] = rows.name().equals(dev.relayfarm.kernel.lower.WidthKernels.SIZE_PARAMETER);
                }
                if (batch.isPresent() && remembers(sig)) { // without a queue every call runs at once anyway
                    remembered[i] = new java.util.LinkedHashMap<>(16, 0.75f, true) {
                        @Override
                        protected boolean removeEldestEntry(Map.Entry<java.nio.ByteBuffer, MemorySegment[]> eldest) {
                            return size() > REMEMBERED_INPUTS;
                        }
                    };
                }
                MemorySegment args = constantArena.allocate(ValueLayout.ADDRESS, Math.max(1, sig.params().size()));
                kernelArgs[i] = MemorySegment.ofAddress(args.address()).reinterpret(args.byteSize());
            }
            for (int i = 0; i < functions.length; i++) functions[i] = new LoadedFunction(executable.functions().get(i), this::smallInt);
            for (int i = 0; i < constants.length; i++) constants[i] = toNative(constantArena, executable.constants().get(i));
        } catch (RuntimeException e) {
            close(); // the caller gave us the library and gets no VM to close
            throw e;
        }
    }

    public Executable executable() {
        return executable;
    }

    /** How many times queued kernel calls have run (one native call each), since the VM was made. */
    long queueRuns() {
        return queueRuns;
    }

    /** Threads for the kernels' parallel loops (0: all online CPUs). */
    public void setNumThreads(int threads) {
        library.ifPresent(l -> l.setNumThreads(threads));
    }

    /** Runs function {@code function} (usually {@code main}) on tensors. */
    public VmObject run(String function, List<NDArray> args) {
        return invoke(function, args.stream().<VmObject>map(a -> new VmObject.Tensor(HostBuffers.heap(a), a.shape(), a.dtype())).toList());
    }

    public VmObject runMain(NDArray... args) {
        return run("main", List.of(args));
    }

    /**
     * Runs {@code function} on {@code args} (tensors may live anywhere: they are copied into native memory
     * first) and returns its result with every tensor copied to the heap.
     */
    public VmObject invoke(String function, List<VmObject> args) {
        int index = executable.functionIndex(function).orElseThrow(() -> new VmException("no function " + function + " in the executable (it has "
                + executable.functions().stream().map(VmFunction::name).toList() + ")"));
        VmFunction f = executable.functions().get(index);
        if (args.size() != f.numParams()) throw new VmException("function " + function + " takes " + f.numParams() + " arguments, got " + args.size());
        memory.reset();
        batch.ifPresent(KernelBatch::clear); // calls a failed run left queued
        queuedRanges = 0;
        known.clear();
        if (shapes.size() >= KEPT_SHAPES) {
            // between runs nothing reads a kept shape: start again from the shapes this run sees
            shapeArena.close();
            shapeArena = Arena.ofShared();
            shapes.clear();
        }
        VmObject[] regs = new VmObject[f.registerCount()];
        for (int i = 0; i < args.size(); i++) regs[i] = copy(args.get(i), memory);
        VmObject result = detach(execute(new Frame(index, regs, -1)));
        memory.endRun(); // after the copy out: a plan dropped here may have held the result
        return result;
    }

    /** One activation: its function, registers, the next instruction, and the caller's register for the result. */
    private static final class Frame {
        final int function;
        final VmObject[] regs;
        final int resultRegister;
        int pc;

        Frame(int function, VmObject[] regs, int resultRegister) {
            this.function = function;
            this.regs = regs;
            this.resultRegister = resultRegister;
        }
    }

    private VmObject execute(Frame entry) {
        ArrayList<Frame> stack = new ArrayList<>();
        Frame frame = entry;
        LoadedFunction fn = functions[frame.function];
        Instruction[] insns = fn.code;
        VmObject[] r = frame.regs;
        while (true) {
            Instruction ins = insns[frame.pc];
            switch (ins) {
                case Instruction.Move m -> {
                    r[m.dst()] = r[m.src()];
                    frame.pc++;
                }
                case Instruction.Ret ret -> {
                    VmObject result = r[ret.result()];
                    if (stack.isEmpty()) {
                        flush(); // the result is read (copied out) next
                        return result;
                    }
                    int dst = frame.resultRegister;
                    frame = stack.removeLast();
                    fn = functions[frame.function];
                    insns = fn.code;
                    r = frame.regs;
                    r[dst] = result;
                }
                case Instruction.Invoke inv -> {
                    frame = enter(frame, insns, stack, inv.function(), List.of(), inv.args(), inv.dst());
                    fn = functions[frame.function];
                    insns = fn.code;
                    r = frame.regs;
                }
                case Instruction.InvokeClosure inv -> {
                    if (!(r[inv.closure()] instanceof VmObject.Closure c)) throw fault(frame, "calls a non-closure value " + r[inv.closure()]);
                    frame = enter(frame, insns, stack, c.function(), c.captured(), inv.args(), inv.dst());
                    fn = functions[frame.function];
                    insns = fn.code;
                    r = frame.regs;
                }
                case Instruction.InvokePacked p -> {
                    invokePacked(p.kernel(), fn.operands[frame.pc], r, frame);
                    frame.pc++;
                }
                case Instruction.AllocTensor a -> {
                    int[] shape = fn.shapes[frame.pc];
                    if (shape == null) throw fault(frame, "allocates a tensor of shape " + Arrays.toString(a.shape()) + ", whose dimensions do not fit an int");
                    r[a.dst()] = view(storage(r[a.storage()], frame), a.offset(), shape, fn.tensorBytes[frame.pc], a.dtype(), frame);
                    frame.pc++;
                }
                case Instruction.AllocTensorReg a -> {
                    int[] shape = shapeFrom(readable(r[a.shape()]), frame);
                    r[a.dst()] = view(storage(r[a.storage()], frame), a.offset(), shape, bytes(shape, a.dtype()), a.dtype(), frame);
                    frame.pc++;
                }
                case Instruction.AllocStorage a -> {
                    VmObject sizeValue = r[a.size()];
                    long size;
                    if (sizeValue != null && sizeValue == fn.sizeScalars[frame.pc]) {
                        size = fn.sizeValues[frame.pc];
                    } else {
                        size = tensor(readable(sizeValue), frame).scalarAsLong();
                    }
                    if (size < 0) {
                        // static sizes are never negative: this one is a length kernel's "no length" (kernel/lower/DataDependentKernels)
                        throw fault(frame, "allocates storage of " + size + " bytes: the value-dependent length before it has none"
                                + " (arange with a zero or NaN step, or more than 2^31 - 1 elements)");
                    }
                    MemorySegment block = memory.allocate(size, a.alignment());
                    r[a.dst()] = new VmObject.Storage(block.byteSize() == size ? block : block.asSlice(0, size), block);
                    frame.pc++;
                }
                case Instruction.AllocADT a -> {
                    r[a.dst()] = new VmObject.Adt(a.tag(), gather(a.fields(), r));
                    frame.pc++;
                }
                case Instruction.AllocClosure a -> {
                    r[a.dst()] = new VmObject.Closure(a.function(), gather(a.captured(), r));
                    frame.pc++;
                }
                case Instruction.GetField g -> {
                    if (!(r[g.object()] instanceof VmObject.Adt adt)) throw fault(frame, "takes field " + g.index() + " of a non-ADT value " + r[g.object()]);
                    if (g.index() >= adt.fields().size()) throw fault(frame, "takes field " + g.index() + " of a value with " + adt.fields().size() + " fields");
                    r[g.dst()] = adt.fields().get(g.index());
                    frame.pc++;
                }
                case Instruction.GetTag g -> {
                    if (!(r[g.object()] instanceof VmObject.Adt adt)) throw fault(frame, "takes the tag of a non-ADT value " + r[g.object()]);
                    r[g.dst()] = smallInt(adt.tag(), DType.INT32);
                    frame.pc++;
                }
                case Instruction.If i -> {
                    boolean equal = tensor(readable(r[i.test()]), frame).scalarAsLong() == tensor(readable(r[i.target()]), frame).scalarAsLong();
                    frame.pc += equal ? i.trueOffset() : i.falseOffset();
                }
                case Instruction.Goto g -> frame.pc += g.offset();
                case Instruction.LoadConst c -> {
                    r[c.dst()] = constants[c.index()];
                    frame.pc++;
                }
                case Instruction.LoadConsti c -> {
                    r[c.dst()] = fn.immediates[frame.pc];
                    frame.pc++;
                }
                case Instruction.ShapeOf s -> {
                    r[s.dst()] = shapeTensor(tensor(r[s.tensor()], frame).shape());
                    frame.pc++;
                }
                case Instruction.ReshapeTensor s -> {
                    // the tensor's own bytes are not read, only viewed
                    VmObject.Tensor t = tensor(r[s.tensor()], frame);
                    int[] shape = shapeFrom(readable(r[s.shape()]), frame);
                    if (VmObject.Tensor.elements(shape) != VmObject.Tensor.elements(t.shape())) {
                        throw fault(frame, "reshapes a tensor of shape " + Arrays.toString(t.shape()) + " to " + Arrays.toString(shape));
                    }
                    r[s.dst()] = new VmObject.Tensor(t.data(), shape, t.dtype());
                    frame.pc++;
                }
                case Instruction.DeviceCopy d -> {
                    flush();
                    if (d.srcDevice() != 0 || d.dstDevice() != 0) throw fault(frame, "copies from device " + d.srcDevice() + " to " + d.dstDevice() + "; only the host (0) exists");
                    r[d.dst()] = copyTensor(tensor(r[d.src()], frame), memory);
                    frame.pc++;
                }
                case Instruction.KillRegister k -> {
                    // the compiler kills a kernel result's storage after its last read (StorageKills): the block is free again
                    if (r[k.register()] instanceof VmObject.Storage s) memory.release(s.block());
                    r[k.register()] = null;
                    frame.pc++;
                }
                case Instruction.AllocRef a -> {
                    r[a.dst()] = new VmObject.Ref(r[a.value()]);
                    frame.pc++;
                }
                case Instruction.LoadRef l -> {
                    if (!(r[l.ref()] instanceof VmObject.Ref ref)) throw fault(frame, "reads a non-reference value " + r[l.ref()]);
                    r[l.dst()] = ref.value();
                    frame.pc++;
                }
                case Instruction.StoreRef w -> {
                    if (!(r[w.ref()] instanceof VmObject.Ref ref)) throw fault(frame, "writes to a non-reference value " + r[w.ref()]);
                    ref.set(r[w.value()]);
                    frame.pc++;
                }
                case Instruction.Fatal f -> {
                    flush(); // a kernel that failed before it is the first error
                    throw new VmException(f.message());
                }
            }
        }
    }

    /**
     * The frame of a call from {@code caller}: a call directly followed by the Ret of its result is a tail call and
     * replaces the caller's frame (the callee returns straight to the caller's caller); any other pushes the caller.
     */
    private Frame enter(Frame caller, Instruction[] insns, ArrayList<Frame> stack, int function, List<VmObject> captured, List<Integer> args, int dst) {
        if (insns[caller.pc + 1] instanceof Instruction.Ret ret && ret.result() == dst) {
            return call(function, captured, args, caller.regs, caller.resultRegister, stack.size());
        }
        caller.pc++;
        stack.add(caller);
        return call(function, captured, args, caller.regs, dst, stack.size());
    }

    private Frame call(int function, List<VmObject> captured, List<Integer> args, VmObject[] callerRegs, int resultRegister, int depth) {
        if (depth >= options.maxFrames()) {
            throw new VmException("the VM's stack of " + options.maxFrames() + " frames is full calling " + executable.functions().get(function).name()
                    + " (recursion too deep or endless; the limit is VmOptions.maxFrames)");
        }
        VmFunction f = executable.functions().get(function);
        if (captured.size() + args.size() != f.numParams()) {
            throw new VmException("function " + f.name() + " takes " + f.numParams() + " values, got " + captured.size() + " captured and " + args.size() + " arguments");
        }
        VmObject[] regs = new VmObject[f.registerCount()];
        int k = 0;
        for (VmObject c : captured) regs[k++] = c;
        for (int a : args) regs[k++] = callerRegs[a];
        return new Frame(function, regs, resultRegister);
    }

    private void invokePacked(int kernelIndex, int[] operands, VmObject[] r, Frame frame) {
        NativeKernel kernel = kernels[kernelIndex];
        // one pair of lists for every call (the VM runs one call at a time, kernels do not call back into it): no allocation per kernel
        packedTensors.clear();
        for (int a : operands) {
            if (r[a] instanceof VmObject.Tensor t) packedTensors.add(t); // the common case, without the recursive walk
            else collectTensors(r[a], packedTensors, frame);
        }
        if (dynamicParams[kernelIndex].length > 0) {
            checkDynamic(kernel, dynamicParams[kernelIndex], sizeKernel[kernelIndex], packedTensors, frame);
        }
        packedBuffers.clear();
        for (VmObject.Tensor t : packedTensors) packedBuffers.add(t.data());
        try {
            if (remembered[kernelIndex] != null && !rememberedQueued(kernelIndex, kernel)) return;
            if (batch.isEmpty()) {
                kernel.invoke(kernelArgs[kernelIndex], packedBuffers);
                return;
            }
            KernelBatch b = batch.get();
            if (!b.add(kernel, packedBuffers)) {
                flush(); // full: run what is queued, then this call fits
                b.add(kernel, packedBuffers);
            }
            queuedAt[b.size() - 1] = (long) frame.function << 32 | frame.pc;
            int inputs = kernel.signature().numInputs();
            for (int i = 0; i < packedBuffers.size(); i++) {
                MemorySegment m = packedBuffers.get(i);
                queuedStart[queuedRanges] = m.address();
                queuedEnd[queuedRanges] = m.address() + m.byteSize();
                queuedWrite[queuedRanges++] = i >= inputs;
            }
        } catch (VmException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new VmException(where(frame) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether a kernel's results are remembered by its inputs' bytes: static integer tensors only, a few of them (the shape
     * functions of dynamic models, the length kernels of integer ranges). Every kernel is a function of its inputs' bytes; for these, the
     * results are what the VM reads next (a size to allocate, a size to check), so a call queued like the others would
     * make the loop run the queue before almost every kernel of a dynamic model (a width kernel and its shape function
     * per group: the PP-OCRv4 recognizer ran its queue 162 times a run). Remembered, a run at sizes seen before queues
     * every other kernel and runs them together.
     */
    private static boolean remembers(KernelSignature sig) {
        long bytes = 0;
        for (TensorSpec p : sig.params()) {
            if (p.isDynamic() || p.dtype().code() != DType.Code.INT && p.dtype().code() != DType.Code.UINT) return false;
            bytes += p.byteSize();
        }
        return sig.numInputs() > 0 && sig.numInputs() < sig.params().size() && bytes <= REMEMBERED_BYTES;
    }

    /**
     * A call of a kernel whose results are remembered ({@link #remembers}). Inputs seen before: its results are known, so the
     * call is queued like any other (true) and the loop reads them from {@link #known} until the queue runs. Otherwise it
     * runs now, outside the queue (its results are about to be read), and its results are kept (false: done).
     */
    private boolean rememberedQueued(int kernelIndex, NativeKernel kernel) {
        int inputs = kernel.signature().numInputs();
        int keyBytes = 0;
        for (int i = 0; i < inputs; i++) keyBytes += (int) packedBuffers.get(i).byteSize();
        byte[] key = new byte[keyBytes];
        int at = 0;
        for (int i = 0; i < inputs; i++) {
            MemorySegment in = readable(packedTensors.get(i)).data();
            MemorySegment.copy(in, ValueLayout.JAVA_BYTE, 0, key, at, (int) in.byteSize());
            at += (int) in.byteSize();
        }
        java.nio.ByteBuffer k = java.nio.ByteBuffer.wrap(key);
        MemorySegment[] results = remembered[kernelIndex].get(k);
        if (results != null) {
            for (int i = inputs; i < packedTensors.size(); i++) {
                VmObject.Tensor t = packedTensors.get(i);
                known.put(t, new VmObject.Tensor(results[i - inputs], t.shape(), t.dtype()));
            }
            return true;
        }
        // called now: its inputs must be in memory (a known one is still in the queue), its results free of queued calls
        for (int i = 0; i < inputs && !known.isEmpty(); i++) if (known.containsKey(packedTensors.get(i))) flush();
        for (int i = inputs; i < packedBuffers.size(); i++) flushIfTouched(packedBuffers.get(i));
        kernel.invoke(kernelArgs[kernelIndex], packedBuffers);
        results = new MemorySegment[packedBuffers.size() - inputs];
        for (int i = inputs; i < packedBuffers.size(); i++) {
            // on the heap, 8-aligned (a long array) for the loop's int64 reads
            MemorySegment out = packedBuffers.get(i);
            MemorySegment copy = MemorySegment.ofArray(new long[(int) ((out.byteSize() + 7) / 8)]).asSlice(0, out.byteSize());
            MemorySegment.copy(out, 0, copy, 0, out.byteSize());
            results[i - inputs] = copy;
        }
        remembered[kernelIndex].put(k, results);
        return false;
    }

    /**
     * {@code v} as the loop may read it now: a remembered call's known result ({@link #known}), else {@code v} itself once
     * no queued call writes it (the queue runs first when one does).
     */
    private VmObject readable(VmObject v) {
        if (v instanceof VmObject.Tensor t) return readable(t);
        flushIfWritten(v);
        return v;
    }

    private VmObject.Tensor readable(VmObject.Tensor t) {
        if (!known.isEmpty()) {
            VmObject.Tensor k = known.get(t);
            if (k != null) return k;
        }
        flushIfWritten(t);
        return t;
    }

    /**
     * A kernel over dynamic shapes reads as much of each dynamic parameter as its last input says. A row kernel's row count
     * (element 0) is the leading dimension of every dynamic parameter, inputs and results; a width kernel's size is every
     * dynamic dimension of its inputs (its results have sizes of their own, from its shape function; -1 there: the group is
     * not defined at that size). The buffer size of a dynamic parameter is not checked (it may have no rows): a tensor whose
     * dynamic or static dimensions are not the kernel's would be read or written past an end, so the call stops here,
     * naming the kernel, the parameter and the dimension.
     */
    private void checkDynamic(NativeKernel kernel, int[] params, boolean width, List<VmObject.Tensor> tensors, Frame frame) {
        KernelSignature sig = kernel.signature();
        if (tensors.size() != sig.params().size()) throw fault(frame, "passes " + tensors.size() + " tensors to kernel " + sig.name() + ", which takes " + sig.params().size());
        VmObject.Tensor count = tensors.get(sig.numInputs() - 1);
        if (!count.dtype().equals(DType.INT64) || count.data().byteSize() < 8) {
            throw fault(frame, "gives kernel " + sig.name() + (width ? " a size" : " a row count") + " that is not int64");
        }
        // the count may come from a queued kernel (a shape function)
        long n = readable(count).data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        if (width && n < 0) {
            int[] shape = tensors.get(params[0]).shape();
            throw fault(frame, "calls kernel " + sig.name() + " on " + Arrays.toString(shape) + " for " + sig.params().get(params[0]).name()
                    + ": its group is not defined at that dynamic size (too small for it), so its shape function gave no size");
        }
        for (int p : params) {
            if (width && p >= sig.numInputs()) break;
            List<Integer> spec = sig.params().get(p).shape();
            int[] shape = tensors.get(p).shape();
            String param = sig.params().get(p).name();
            if (shape.length != spec.size()) throw fault(frame, "gives kernel " + sig.name() + " a tensor of rank " + shape.length + " for " + param + " " + spec);
            for (int d = 0; d < shape.length; d++) {
                if (spec.get(d) != TensorSpec.DYNAMIC) {
                    if (shape[d] != spec.get(d)) throw fault(frame, "gives kernel " + sig.name() + " " + Arrays.toString(shape) + " for " + param + ", whose dimension " + d + " must be " + spec.get(d));
                } else if (shape[d] != n) {
                    throw fault(frame, width
                            ? "gives kernel " + sig.name() + " " + Arrays.toString(shape) + " for " + param + ", whose dynamic dimension " + d
                                    + " must be the kernel's size " + n + " (every dynamic dimension of a width kernel's inputs is one size)"
                            : "gives kernel " + sig.name() + " " + shape[d] + " rows for " + param + " and a row count of " + n
                                    + " (a dynamic batch must be the same in every tensor of the call)");
                }
            }
        }
    }

    private void collectTensors(VmObject v, List<VmObject.Tensor> out, Frame frame) {
        switch (v) {
            case VmObject.Tensor t -> out.add(t);
            case VmObject.Adt a -> a.fields().forEach(f -> collectTensors(f, out, frame));
            case null, default -> throw fault(frame, "passes " + v + " to a kernel (only tensors and tuples of tensors)");
        }
    }

    /** Runs the queued calls when one of them writes {@code v}'s bytes (a tensor the loop is about to read). */
    private void flushIfWritten(VmObject v) {
        if (queuedRanges > 0 && v instanceof VmObject.Tensor t && overlaps(t.data(), true)) flush();
    }

    /** Runs the queued calls when one of them reads or writes {@code seg} (memory the loop is about to write). */
    private void flushIfTouched(MemorySegment seg) {
        if (queuedRanges > 0 && overlaps(seg, false)) flush();
    }

    private boolean overlaps(MemorySegment seg, boolean writesOnly) {
        long start = seg.address(), end = start + seg.byteSize();
        for (int i = 0; i < queuedRanges; i++) {
            if ((!writesOnly || queuedWrite[i]) && queuedStart[i] < end && start < queuedEnd[i]) return true;
        }
        return false;
    }

    /** Runs the queued kernel calls; a failing one is an error naming the InvokePacked that queued it. */
    private void flush() {
        queuedRanges = 0;
        known.clear();
        if (batch.isEmpty()) return;
        if (batch.get().size() > 0) queueRuns++;
        try {
            batch.get().run();
        } catch (KernelBatch.Failure e) {
            long at = queuedAt[e.index()];
            int function = (int) (at >>> 32), pc = (int) at;
            throw new VmException("function " + executable.functions().get(function).name() + " at instruction " + pc + " ("
                    + functions[function].code[pc] + "): " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new VmException("running queued kernel calls: " + e.getMessage(), e);
        }
    }

    private static List<VmObject> gather(List<Integer> registers, VmObject[] r) {
        VmObject[] out = new VmObject[registers.size()];
        for (int i = 0; i < out.length; i++) out[i] = r[registers.get(i)];
        return Arrays.asList(out);
    }

    /**
     * A shape as an int64 tensor, kept and never written again, like a constant: in run memory, the block it is written to
     * may have been read by a queued call still, and the queue would run first (about once per kernel of a dynamic model).
     * Past {@link #KEPT_SHAPES} in one run (a loop over ever new shapes), written in run memory as before.
     */
    private VmObject.Tensor shapeTensor(int[] shape) {
        java.nio.IntBuffer key = java.nio.IntBuffer.wrap(shape);
        VmObject.Tensor kept = shapes.get(key);
        if (kept != null) return kept;
        boolean keep = shapes.size() < KEPT_SHAPES;
        MemorySegment seg = keep ? shapeArena.allocate(8L * Math.max(1, shape.length), 64) : memory.allocate(8L * shape.length, 64);
        if (!keep) flushIfTouched(seg); // a reused block a queued call may still read or write
        for (int k = 0; k < shape.length; k++) seg.setAtIndex(ValueLayout.JAVA_LONG, k, shape[k]);
        VmObject.Tensor t = new VmObject.Tensor(seg.asSlice(0, 8L * shape.length), new int[] {shape.length}, DType.INT64);
        if (keep) shapes.put(java.nio.IntBuffer.wrap(shape.clone()), t);
        return t;
    }

    private VmObject.Tensor smallInt(long value, DType dtype) {
        long key = value * 2 + (dtype.bits() == 32 ? 1 : 0);
        VmObject.Tensor t = smallInts.get(key);
        if (t == null) {
            MemorySegment seg = constantArena.allocate(8, 64).asSlice(0, dtype.bits() / 8);
            if (dtype.bits() == 32) seg.set(ValueLayout.JAVA_INT, 0, (int) value);
            else seg.set(ValueLayout.JAVA_LONG, 0, value);
            t = new VmObject.Tensor(seg, new int[0], dtype);
            smallInts.put(key, t);
        }
        return t;
    }

    /** What TensorSpec.byteSize says, without building one. */
    private static long bytes(int[] shape, DType dtype) {
        return VmObject.Tensor.elements(shape) * dtype.storageBytes() * dtype.lanes();
    }

    private VmObject.Tensor view(VmObject.Storage s, long offset, int[] shape, long bytes, DType dtype, Frame frame) {
        if (offset < 0 || offset + bytes > s.segment().byteSize()) {
            throw fault(frame, "places a tensor of " + bytes + " bytes at offset " + offset + " of storage of " + s.segment().byteSize() + " bytes");
        }
        return new VmObject.Tensor(s.segment().asSlice(offset, bytes), shape, dtype);
    }

    private VmObject.Storage storage(VmObject v, Frame frame) {
        if (v instanceof VmObject.Storage s) return s;
        throw fault(frame, "expects storage, got " + v);
    }

    private VmObject.Tensor tensor(VmObject v, Frame frame) {
        if (v instanceof VmObject.Tensor t) return t;
        throw fault(frame, "expects a tensor, got " + v);
    }

    /**
     * The dimensions a shape tensor holds, read in place. (A copy to a heap array first, through {@code toNDArray}, lost
     * elements of int64 shapes once the JIT had compiled the loop: seen as dynamic-batch runs that failed after a
     * hundred or so identical runs with every raw read of the same bytes correct; not reproduced outside the VM.)
     */
    private int[] shapeFrom(VmObject v, Frame frame) {
        VmObject.Tensor t = tensor(v, frame);
        DType dt = t.dtype();
        if (t.shape().length != 1 || !(dt.code() == DType.Code.INT || dt.code() == DType.Code.UINT) || dt.lanes() != 1) {
            throw fault(frame, "expects a shape (an integer vector), got a " + dt + " tensor of rank " + t.shape().length);
        }
        int[] shape = new int[t.shape()[0]];
        MemorySegment data = t.data();
        for (int i = 0; i < shape.length; i++) {
            long d = switch (dt.storageBytes()) {
                case 8 -> data.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
                case 4 -> dt.code() == DType.Code.INT ? data.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i) : Integer.toUnsignedLong(data.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i));
                case 2 -> dt.code() == DType.Code.INT ? data.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) : Short.toUnsignedLong(data.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
                default -> dt.code() == DType.Code.INT ? data.get(ValueLayout.JAVA_BYTE, i) : Byte.toUnsignedLong(data.get(ValueLayout.JAVA_BYTE, i));
            };
            if (d < 0 || d > Integer.MAX_VALUE) throw fault(frame, "reads a dimension of " + d + " from a shape");
            shape[i] = (int) d;
        }
        return shape;
    }

    private VmException fault(Frame frame, String what) {
        return new VmException(where(frame) + " " + what);
    }

    private String where(Frame frame) {
        return "function " + executable.functions().get(frame.function).name() + " at instruction " + frame.pc + " (" + functions[frame.function].code[frame.pc] + ")";
    }

    /** A copy of {@code t} in the run's native memory, 64-byte aligned. */
    private static VmObject.Tensor copyTensor(VmObject.Tensor t, RunMemory memory) {
        long bytes = t.data().byteSize();
        MemorySegment seg = memory.allocate(bytes, 64);
        MemorySegment.copy(t.data(), 0, seg, 0, bytes);
        return new VmObject.Tensor(seg.asSlice(0, bytes), t.shape(), t.dtype());
    }

    /** {@code v} with every tensor in the run's native memory (a kernel reads only native, aligned buffers). */
    private static VmObject copy(VmObject v, RunMemory memory) {
        return switch (v) {
            case VmObject.Tensor t -> copyTensor(t, memory);
            case VmObject.Adt a -> new VmObject.Adt(a.tag(), a.fields().stream().map(f -> copy(f, memory)).toList());
            case VmObject.Closure c -> new VmObject.Closure(c.function(), c.captured().stream().map(f -> copy(f, memory)).toList());
            case VmObject.Storage s -> throw new VmException("storage cannot be an argument of a VM function");
            case VmObject.Ref ref -> throw new VmException("a reference cannot be an argument of a VM run (pass the value it holds)");
        };
    }

    /**
     * {@code v} with every tensor copied to the heap, so it outlives the run's memory. Iterative: a result
     * list of 100,000 elements is an ADT nested 100,000 deep. A reference is copied when first met and filled at the
     * end, so references that alias stay one, and a cycle through a reference (a closure stored in the reference it
     * captures) ends.
     */
    private static VmObject detach(VmObject v) {
        if (v instanceof VmObject.Tensor t) return heapCopy(t); // a model's usual result: no walk, no map
        // post-order over the value graph with an explicit stack; shared sub-values are copied once
        Map<VmObject, VmObject> done = new java.util.IdentityHashMap<>();
        List<VmObject.Ref> refs = new ArrayList<>();
        ArrayList<VmObject> stack = new ArrayList<>();
        stack.add(v);
        while (!stack.isEmpty()) {
            VmObject top = stack.getLast();
            if (done.containsKey(top)) {
                stack.removeLast();
                continue;
            }
            if (top instanceof VmObject.Ref ref) {
                stack.removeLast();
                done.put(ref, new VmObject.Ref(null));
                refs.add(ref);
                if (ref.value() != null) stack.add(ref.value());
                continue;
            }
            List<VmObject> kids = switch (top) {
                case VmObject.Adt a -> a.fields();
                case VmObject.Closure c -> c.captured();
                default -> List.of();
            };
            boolean ready = true;
            for (VmObject k : kids) {
                if (!done.containsKey(k)) {
                    stack.add(k);
                    ready = false;
                }
            }
            if (!ready) continue;
            stack.removeLast();
            done.put(top, switch (top) {
                case VmObject.Tensor t -> heapCopy(t);
                case VmObject.Adt a -> new VmObject.Adt(a.tag(), a.fields().stream().map(done::get).toList());
                case VmObject.Closure c -> new VmObject.Closure(c.function(), c.captured().stream().map(done::get).toList());
                case VmObject.Storage s -> throw new VmException("a VM function returned storage");
                case VmObject.Ref ref -> throw new IllegalStateException("references are copied when first met");
            });
        }
        for (VmObject.Ref ref : refs) ((VmObject.Ref) done.get(ref)).set(done.get(ref.value()));
        return done.get(v);
    }

    private static VmObject.Tensor heapCopy(VmObject.Tensor t) {
        NDArray a = t.toNDArray();
        return new VmObject.Tensor(HostBuffers.heap(a), a.shape(), a.dtype());
    }

    private static VmObject.Tensor toNative(Arena arena, NDArray a) {
        TensorSpec spec = new TensorSpec("constant", Arrays.stream(a.shape()).boxed().toList(), a.dtype());
        return new VmObject.Tensor(HostBuffers.copyIn(arena, spec, a).asSlice(0, spec.byteSize()), a.shape(), a.dtype());
    }

    @Override
    public void close() {
        batch.ifPresent(KernelBatch::close);
        memory.close();
        shapeArena.close();
        constantArena.close();
        library.ifPresent(KernelLibrary::close);
    }
}
