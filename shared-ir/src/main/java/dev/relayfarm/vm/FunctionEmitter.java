package dev.relayfarm.vm;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.lower.DataDependentKernels;
import dev.relayfarm.kernel.lower.RowKernels;
import dev.relayfarm.kernel.lower.WidthKernels;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bytecode of one global function of a module that {@link VmCompiler#prepare} has lambda-lifted and
 * put in A-normal form. Every expression's value lands in a fresh register (a let variable names the
 * register of its value, no {@link Instruction.Move}); the branches of an {@code if} or a {@code match}
 * each move their result into one join register, except in tail position, where each branch returns itself
 * ({@link #tail}).
 *
 * <p>{@code if}: {@code LoadConsti 1; If cond == 1 ? +1 : else; <then>; Move; Goto end; else: <else>; Move}.
 * {@code match}: the clauses in order; each pattern is tested by {@link Instruction.GetTag} and
 * {@link Instruction.If} against its constructor's tag, fields are taken with {@link Instruction.GetField}
 * (a tuple pattern is the fields of a tag-0 value), a failed test jumps to the next clause, and after the
 * last one a {@link Instruction.Fatal} reports that nothing matched. Nested patterns test outside-in.
 *
 * <p>Let chains are walked in a loop, so a long body (20,000 lets in VmProgramsTest) does not deepen the Java stack; only nested
 * {@code if}/{@code match} bodies recurse (as deep as the source nests them).
 */
final class FunctionEmitter {
    /** Alignment of every storage block: the kernels' vector loads assume 64 bytes. */
    static final long ALIGNMENT = 64;

    private final VmCompiler compiler;
    private final String name;
    private final List<Instruction> code = new ArrayList<>();
    private final Map<Var, Integer> registers = new IdentityHashMap<>();
    /** Let variables bound to a Primitive function or a global: called directly, not through a closure. */
    private final Map<Var, Expr> known = new IdentityHashMap<>();
    /** Each kernel result's tensor register and its storage register, for {@link StorageKills}. */
    private final Map<Integer, Integer> storageOf = new HashMap<>();
    private int nextRegister;

    FunctionEmitter(VmCompiler compiler, String name) {
        this.compiler = compiler;
        this.name = name;
    }

    /** Global {@code f}; a closure builder ({@link VmCompiler#buildsClosure}) takes its captured values first, then the inner function's parameters. */
    VmFunction emitGlobal(Function f) {
        List<Var> params = new ArrayList<>(f.params());
        Expr body = f.body();
        Function inner = VmCompiler.closureOf(f);
        if (inner != null) {
            params.addAll(inner.params());
            body = inner.body();
        }
        for (Var p : params) registers.put(p, nextRegister++);
        tail(body);
        return new VmFunction(name, params.size(), nextRegister, StorageKills.insert(code, storageOf));
    }

    private int fresh() {
        return nextRegister++;
    }

    private int add(Instruction i) {
        code.add(i);
        return code.size() - 1;
    }

    /** Emits {@code e} (a let chain, walked iteratively) and returns the register holding its value. */
    private int emit(Expr e) {
        while (e instanceof Let l) {
            bind(l);
            e = l.body();
        }
        return value(e);
    }

    private void bind(Let l) {
        switch (l.value()) {
            case Function f when f.isPrimitive() -> known.put(l.var(), f);
            case GlobalVar g -> known.put(l.var(), g);
            case Var v when known.containsKey(v) -> known.put(l.var(), known.get(v));
            case Function f -> throw unsupported("a local function that lambda-lift left in place (inside a polymorphic function?)", l.var(), f.span());
            default -> registers.put(l.var(), emit(l.value()));
        }
    }

    private int value(Expr e) {
        return switch (e) {
            case Let l -> emit(l);
            case Var v -> variable(v);
            case GlobalVar g -> globalAsValue(g, e.span());
            case Constant c -> {
                int dst = fresh();
                add(new Instruction.LoadConst(compiler.constant(c.data()), dst));
                yield dst;
            }
            case Tuple t -> {
                List<Integer> fields = new ArrayList<>();
                for (Expr f : t.fields()) fields.add(value(f));
                int dst = fresh();
                add(new Instruction.AllocADT(0, fields, dst));
                yield dst;
            }
            case TupleGetItem g -> {
                int tuple = value(g.tuple());
                int dst = fresh();
                add(new Instruction.GetField(tuple, g.index(), dst));
                yield dst;
            }
            case If i -> branch(i, fresh());
            case Match m -> match(m, fresh());
            case Call c -> call(c);
            case Constructor c -> {
                int dst = fresh();
                if (c.inputs().isEmpty()) {
                    add(new Instruction.AllocADT(c.tag(), List.of(), dst));
                } else {
                    add(new Instruction.AllocClosure(compiler.constructorWrapper(c), List.of(), dst));
                }
                yield dst;
            }
            case Function f -> throw unsupported(f.isPrimitive() ? "a Primitive function used as a value (only calls of it become kernels)"
                    : "a function literal that lambda-lift left in place (inside a polymorphic function?)", null, f.span());
            case Op o -> throw unsupported("operator " + o.name() + " used outside a fused Primitive function", null, e.span());
            case RefCreate r -> {
                int value = value(r.value());
                int dst = fresh();
                add(new Instruction.AllocRef(value, dst));
                yield dst;
            }
            case RefRead r -> {
                int ref = value(r.ref());
                int dst = fresh();
                add(new Instruction.LoadRef(ref, dst));
                yield dst;
            }
            case RefWrite w -> {
                int ref = value(w.ref());
                int value = value(w.value());
                add(new Instruction.StoreRef(ref, value));
                int unit = fresh();
                add(new Instruction.AllocADT(0, List.of(), unit));
                yield unit;
            }
        };
    }

    private int variable(Var v) {
        Integer r = registers.get(v);
        if (r != null) return r;
        Expr k = known.get(v);
        if (k instanceof GlobalVar g) return globalAsValue(g, v.span());
        if (k instanceof Function) throw unsupported("a Primitive function used as a value (only calls of it become kernels)", v, v.span());
        throw new VmException("free variable %" + v.name() + " in @" + name + where(v.span()));
    }

    /** A global used as a value (passed to @map, stored in a list): a closure capturing nothing. */
    private int globalAsValue(GlobalVar g, Span span) {
        Function f = compiler.module().lookup(g);
        if (f.isPrimitive() || VmCompiler.buildsClosure(f)) {
            throw unsupported("global @" + g.name() + " used as a value (" + (f.isPrimitive() ? "a Primitive function" : "a closure builder") + ")", null, span);
        }
        int dst = fresh();
        add(new Instruction.AllocClosure(compiler.functionOf(g), List.of(), dst));
        return dst;
    }

    /** No join register: the construct is in tail position and each arm ends in its own {@link Instruction.Ret}. */
    private static final int TAIL = -1;

    /**
     * Emits {@code e} in tail position: every path ends in a {@link Instruction.Ret}, so a call there is directly
     * followed by the Ret of its result, which the VM runs as a tail call (no new frame): a tail-recursive loop,
     * such as an imported ONNX Loop, runs in constant VM stack.
     */
    private void tail(Expr e) {
        while (e instanceof Let l) {
            if (l.body() == l.var() && !(l.value() instanceof Function)) {
                e = l.value(); // A-normal form's "let %x = if ...; %x": the bound value is itself in tail position
                continue;
            }
            bind(l);
            e = l.body();
        }
        switch (e) {
            case If i -> branch(i, TAIL);
            case Match m -> match(m, TAIL);
            default -> add(new Instruction.Ret(value(e)));
        }
    }

    /** One arm of an {@code if} or {@code match}: its value moved to {@code join} and a jump to the end (unless {@code last}), or in tail position its own Ret. */
    private void arm(Expr body, int join, boolean last, List<Integer> jumpsToEnd) {
        forgetRowShapes(); // what the code before the branch knew holds in each arm, but an arm's knowledge is its own

        if (join == TAIL) {
            tail(body);
            return;
        }
        add(new Instruction.Move(emit(body), join));
        if (!last) jumpsToEnd.add(add(null));
    }

    private int branch(If i, int join) {
        int cond = value(i.cond());
        int one = fresh();
        add(new Instruction.LoadConsti(1, one));
        int test = add(null);
        List<Integer> jumps = new ArrayList<>();
        arm(i.thenBranch(), join, false, jumps);
        int elseStart = code.size();
        arm(i.elseBranch(), join, true, jumps);
        code.set(test, new Instruction.If(cond, one, 1, elseStart - test));
        for (int at : jumps) code.set(at, new Instruction.Goto(code.size() - at));
        forgetRowShapes();
        return join;
    }

    /** A tag test waiting for the start of the next clause, where it jumps when the tag differs. */
    private record PendingTest(int at, int tag, int expected) {}

    private int match(Match m, int join) {
        int scrutinee = value(m.data());
        List<Integer> jumps = new ArrayList<>();
        for (Clause c : m.clauses()) {
            List<PendingTest> tests = new ArrayList<>();
            test(c.pattern(), scrutinee, tests);
            arm(c.body(), join, false, jumps); // not last: the Fatal below follows the clauses
            int next = code.size();
            for (PendingTest t : tests) code.set(t.at(), new Instruction.If(t.tag(), t.expected(), 1, next - t.at()));
        }
        add(new Instruction.Fatal("no clause of the match in @" + name + where(m.span()) + " matched its value"));
        for (int at : jumps) code.set(at, new Instruction.Goto(code.size() - at));
        forgetRowShapes();
        return join;
    }

    /** Tests {@code p} against the value in {@code reg}, binding its variables; recursion is as deep as the pattern. */
    private void test(Pattern p, int reg, List<PendingTest> tests) {
        switch (p) {
            case Pattern.Wildcard w -> {}
            case Pattern.Bind b -> registers.put(b.var(), reg);
            case Pattern.Ctor c -> {
                int tag = fresh();
                add(new Instruction.GetTag(reg, tag));
                int expected = fresh();
                add(new Instruction.LoadConsti(c.constructor().tag(), expected));
                tests.add(new PendingTest(add(null), tag, expected));
                fields(c.args(), reg, tests);
            }
            case Pattern.TuplePattern t -> fields(t.fields(), reg, tests);
        }
    }

    private void fields(List<Pattern> patterns, int reg, List<PendingTest> tests) {
        for (int i = 0; i < patterns.size(); i++) {
            if (patterns.get(i) instanceof Pattern.Wildcard) continue;
            int field = fresh();
            add(new Instruction.GetField(reg, i, field));
            test(patterns.get(i), field, tests);
        }
    }

    private int call(Call c) {
        Expr callee = c.callee() instanceof Var v && known.containsKey(v) ? known.get(v) : c.callee();
        if (callee instanceof GlobalVar g && compiler.module().lookup(g).isPrimitive()) callee = compiler.module().lookup(g);
        List<Integer> args = new ArrayList<>();
        for (Expr a : c.args()) args.add(value(a));
        int dst;
        switch (callee) {
            case Function f when f.isPrimitive() -> {
                return packed(f, c, args);
            }
            case GlobalVar g -> {
                dst = fresh();
                int fn = compiler.functionOf(g);
                add(VmCompiler.buildsClosure(compiler.module().lookup(g)) ? new Instruction.AllocClosure(fn, args, dst) : new Instruction.Invoke(fn, args, dst));
            }
            case Constructor k -> {
                dst = fresh();
                add(new Instruction.AllocADT(k.tag(), args, dst));
            }
            case Op o -> throw unsupported("operator " + o.name() + " called outside a fused Primitive function", null, c.span());
            default -> {
                int closure = value(callee);
                dst = fresh();
                add(new Instruction.InvokeClosure(closure, args, dst));
            }
        }
        return dst;
    }

    /**
     * A call of Primitive function {@code f}: a reshape-only body is {@link Instruction.ReshapeTensor} of its
     * argument (no kernel, as in the graph executor); otherwise each result gets storage and a tensor, and
     * the kernel writes them ({@link Instruction.InvokePacked}); a tuple result is regrouped into tag-0 values.
     */
    private int packed(Function f, Call c, List<Integer> args) {
        Type resultType = compiler.types().typeOf(c);
        List<TensorType> outs = new ArrayList<>();
        flatten(resultType, outs, c);
        if (DataDependentKernels.handles(f)) {
            return DataDependentKernels.sizedBefore(f) ? sizedBefore(f, c, args, outs.getFirst()) : sizedAfter(f, c, args, resultType, outs);
        }
        boolean dynamicResult = outs.stream().anyMatch(t -> !t.isStatic());
        if (dynamicResult || c.args().stream().anyMatch(a -> !dynamicDims(compiler.types().typeOf(a)).isEmpty())) {
            // a dynamic batch alone (every ? leading) is a row kernel's, any other dynamic dimension a width kernel's
            return dynamicResult && leadingOnly(c, outs) && compiler.rowsStayApart(f) ? rowsPacked(f, c, args, resultType, outs)
                    : widthPacked(f, c, args, resultType, outs);
        }
        int alias = GraphBuilder.sameBytesParam(f);
        if (alias >= 0 && outs.size() == 1 && f.params().stream().allMatch(p -> compiler.types().typeOf(p) instanceof TensorType)) {
            long[] shape = staticShape(outs.getFirst(), c);
            int shapeReg = fresh();
            add(new Instruction.LoadConst(compiler.constant(NDArray.fromLongs(DType.INT64, new int[] {shape.length}, shape)), shapeReg));
            int dst = fresh();
            add(new Instruction.ReshapeTensor(args.get(alias), shapeReg, dst));
            return dst;
        }
        int kernel = compiler.kernel(f);
        List<Integer> results = new ArrayList<>();
        for (TensorType t : outs) results.add(staticResult(t, c));
        List<Integer> operands = new ArrayList<>(args);
        operands.addAll(results);
        add(new Instruction.InvokePacked(kernel, operands, results.size()));
        return resultType instanceof TupleType ? regroup(resultType, results, new int[1]) : results.getFirst();
    }

    /**
     * A call of a group whose results have a dynamic leading dimension (a row kernel: kernel/lower/RowKernels). The
     * shape of its first row-carrying argument ({@link Instruction.ShapeOf}) gives the row count; the group's shape
     * function, a kernel too, turns it into each result's shape and byte size; each result gets storage of that size
     * and a tensor of that shape ({@link Instruction.AllocTensorReg}); the kernel takes the row count after its inputs.
     */
    private int rowsPacked(Function f, Call c, List<Integer> args, Type resultType, List<TensorType> outs) {
        Carrier carrier = carrier(c, args, FunctionEmitter::hasDynamicRows);
        if (carrier == null) {
            throw unsupported("a kernel result of dynamic shape " + resultType + " with no argument of dynamic rows (kernels take a dynamic leading dimension only)", null, c.span());
        }
        // a row kernel's results have its arguments' rows: a shape read once serves every kernel downstream of it
        RowShape known = carrier.whole() ? rowShapes.get(carrier.register()) : null;
        if (known == null) known = new RowShape(shapeOf(carrier.register()), carrier.type().shape().size());
        int shape = known.register();
        // the shape function's results: per result, its shape and its byte size
        List<Integer> lengths = new ArrayList<>();
        for (TensorType t : outs) lengths.addAll(List.of(t.shape().size(), 1));
        List<Integer> shapes = shapeFunction(compiler.kernel(RowKernels.shapeFunction(known.rank(), outs)), shape, lengths, c);
        List<Integer> results = new ArrayList<>();
        for (int j = 0; j < outs.size(); j++) results.add(dynamicResult(shapes.get(2 * j + 1), shapes.get(2 * j), outs.get(j).dtype()));
        List<Integer> operands = new ArrayList<>(args);
        operands.add(shape);
        operands.addAll(results);
        add(new Instruction.InvokePacked(compiler.rowKernel(f), operands, results.size()));
        for (int r : results) rowShapes.put(r, known);
        return resultType instanceof TupleType ? regroup(resultType, results, new int[1]) : results.getFirst();
    }

    /** Whether every dynamic dimension of the call's arguments and results is a leading one. */
    private boolean leadingOnly(Call c, List<TensorType> outs) {
        for (Expr a : c.args()) if (dynamicDims(compiler.types().typeOf(a)).stream().anyMatch(d -> d > 0)) return false;
        for (TensorType t : outs) if (dynamicDims(t).stream().anyMatch(d -> d > 0)) return false;
        return true;
    }

    /** The positions of the dynamic dimensions of {@code t} (of every field of a tuple). */
    private static List<Integer> dynamicDims(Type t) {
        List<Integer> out = new ArrayList<>();
        switch (t) {
            case TensorType tt -> {
                for (int d = 0; d < tt.shape().size(); d++) if (!tt.shape().get(d).isStatic()) out.add(d);
            }
            case TupleType tt -> tt.fields().forEach(f -> out.addAll(dynamicDims(f)));
            case null, default -> {}
        }
        return out;
    }

    /**
     * A call of a group with dynamic dimensions beyond a leading batch (a width kernel: kernel/lower/WidthKernels), all of
     * its inputs' one size. The shape of the argument the size is read from ({@link Instruction.ShapeOf}) goes to the
     * group's shape function, a kernel too, which gives the size (int64 [1]) and each dynamic result's shape and byte
     * size; each such result gets storage and a tensor of that shape, a static one as usual; the kernel takes the size
     * after its inputs.
     */
    private int widthPacked(Function f, Call c, List<Integer> args, Type resultType, List<TensorType> outs) {
        // the size's carrier: the first argument with a dynamic dimension, or its first such field (a tuple parameter)
        Carrier carrier = carrier(c, args, t -> !dynamicDims(t).isEmpty());
        if (carrier == null) throw unsupported("a kernel result of dynamic shape " + resultType + " with no argument of dynamic shape", null, c.span());
        Integer shape = carrier.whole() ? sizeShapes.get(carrier.register()) : null;
        if (shape == null) {
            shape = shapeOf(carrier.register());
            if (carrier.whole()) sizeShapes.put(carrier.register(), shape);
        }
        int rank = carrier.type().shape().size(), dim = dynamicDims(carrier.type()).getFirst();
        // the shape function's results: the size, then per dynamic result its shape and its byte size
        List<Integer> lengths = new ArrayList<>(List.of(1));
        for (TensorType t : outs) if (!t.isStatic()) lengths.addAll(List.of(t.shape().size(), 1));
        List<Integer> shapes = shapeFunction(compiler.widthShapeFunction(f, "called in @" + name + where(c.span()), rank, dim), shape, lengths, c);
        List<Integer> results = new ArrayList<>();
        int next = 1;
        for (TensorType t : outs) {
            if (t.isStatic()) {
                results.add(staticResult(t, c));
            } else {
                results.add(dynamicResult(shapes.get(next + 1), shapes.get(next), t.dtype()));
                next += 2;
            }
        }
        List<Integer> operands = new ArrayList<>(args);
        operands.add(shapes.getFirst());
        operands.addAll(results);
        add(new Instruction.InvokePacked(compiler.widthKernel(f), operands, results.size()));
        return resultType instanceof TupleType ? regroup(resultType, results, new int[1]) : results.getFirst();
    }

    /**
     * A call of a group whose result length its inputs' values give before it runs ({@code arange}: kernel/lower's
     * DataDependentKernels): its length kernel gives the result's shape and byte size, the result gets storage of that
     * size and a tensor of that shape, and the kernel takes the shape (its element 0, the length) as a row count.
     */
    private int sizedBefore(Function f, Call c, List<Integer> args, TensorType out) {
        int shape = staticResult(TensorType.of(DType.INT64, 1), c);
        int bytes = staticResult(TensorType.of(DType.INT64, 1), c);
        List<Integer> lengthOperands = new ArrayList<>(args);
        lengthOperands.add(shape);
        lengthOperands.add(bytes);
        add(new Instruction.InvokePacked(compiler.kernel(DataDependentKernels.lengthFunction(f)), lengthOperands, 2));
        int tensor = dynamicResult(bytes, shape, out.dtype());
        List<Integer> operands = new ArrayList<>(args);
        operands.add(shape);
        operands.add(tensor);
        add(new Instruction.InvokePacked(compiler.kernel(f), operands, 1));
        rowShapes.put(tensor, new RowShape(shape, 1));
        return tensor;
    }

    /**
     * A call of a group whose result sizes are known only once it has run ({@code argwhere}, {@code unique}, NMS:
     * kernel/lower's DataDependentKernels): each result gets storage of its upper bound, the kernel writes the results
     * and then each one's shape into one more int64 tensor, and each dynamic result becomes a view of its storage with
     * that shape ({@link Instruction.AllocTensorReg}). Only the views are kernel results for {@link StorageKills}: the
     * upper-bound tensors the kernel wrote through die with the call, their storage lives on in the views.
     */
    private int sizedAfter(Function f, Call c, List<Integer> args, Type resultType, List<TensorType> outs) {
        List<TensorType> bounds = DataDependentKernels.upperBounds(f);
        List<Integer> storages = new ArrayList<>(), written = new ArrayList<>(), shapes = new ArrayList<>();
        for (TensorType bound : bounds) {
            int tensor = staticResult(bound, c);
            storages.add(storageOf.remove(tensor));
            written.add(tensor);
        }
        for (TensorType t : outs) shapes.add(staticResult(TensorType.of(DType.INT64, t.shape().size()), c));
        List<Integer> operands = new ArrayList<>(args);
        operands.addAll(written);
        operands.addAll(shapes);
        add(new Instruction.InvokePacked(compiler.kernel(f), operands, written.size() + shapes.size()));
        List<Integer> results = new ArrayList<>();
        for (int j = 0; j < outs.size(); j++) {
            int view = fresh();
            add(new Instruction.AllocTensorReg(storages.get(j), 0, shapes.get(j), outs.get(j).dtype(), view));
            storageOf.put(view, storages.get(j));
            results.add(view);
        }
        return resultType instanceof TupleType ? regroup(resultType, results, new int[1]) : results.getFirst();
    }

    private static boolean hasDynamicRows(TensorType t) {
        return !t.shape().isEmpty() && t.shape().getFirst() instanceof Dim.Any;
    }

    /** The tensor a kernel's dynamic sizes are read from: its register, its type, and whether it is an argument itself (not a field of one). */
    private record Carrier(int register, TensorType type, boolean whole) {}

    /** The first argument of {@code c} that is, or holds in a tuple, a tensor {@code wanted} accepts (a field is taken out with GetField); null when none. */
    private Carrier carrier(Call c, List<Integer> args, java.util.function.Predicate<TensorType> wanted) {
        for (int i = 0; i < c.args().size(); i++) {
            Type t = compiler.types().typeOf(c.args().get(i));
            List<Integer> path = pathTo(t, wanted);
            if (path == null) continue;
            int register = args.get(i);
            for (int index : path) {
                int field = fresh();
                add(new Instruction.GetField(register, index, field));
                register = field;
                t = ((TupleType) t).fields().get(index);
            }
            return new Carrier(register, (TensorType) t, path.isEmpty());
        }
        return null;
    }

    private int shapeOf(int tensor) {
        int shape = fresh();
        add(new Instruction.ShapeOf(tensor, shape));
        return shape;
    }

    /**
     * The results of shape-function kernel {@code kind} on the shape in register {@code shape}: int64 vectors of the given
     * lengths, computed by one call per shape in straight-line code.
     */
    private List<Integer> shapeFunction(int kind, int shape, List<Integer> lengths, Call c) {
        List<Integer> results = shapeFunctionCalls.get(List.of(kind, shape));
        if (results != null) return results;
        results = new ArrayList<>();
        for (int n : lengths) results.add(staticResult(TensorType.of(DType.INT64, n), c));
        List<Integer> operands = new ArrayList<>(List.of(shape));
        operands.addAll(results);
        add(new Instruction.InvokePacked(kind, operands, results.size()));
        shapeFunctionCalls.put(List.of(kind, shape), results);
        return results;
    }

    /** A kernel result of {@code dtype} sized at run time: storage of the byte size in register {@code bytes}, a tensor of the shape in register {@code shape}. */
    private int dynamicResult(int bytes, int shape, DType dtype) {
        int storage = fresh();
        add(new Instruction.AllocStorage(bytes, ALIGNMENT, dtype, storage));
        int tensor = fresh();
        add(new Instruction.AllocTensorReg(storage, 0, shape, dtype, tensor));
        storageOf.put(tensor, storage);
        return tensor;
    }

    /** The fields leading from a value of type {@code t} to the first tensor {@code wanted} accepts (empty: {@code t} is one), or null when none. */
    private static List<Integer> pathTo(Type t, java.util.function.Predicate<TensorType> wanted) {
        if (t instanceof TensorType tt) return wanted.test(tt) ? List.of() : null;
        if (t instanceof TupleType tt) {
            for (int i = 0; i < tt.fields().size(); i++) {
                List<Integer> inner = pathTo(tt.fields().get(i), wanted);
                if (inner != null) {
                    List<Integer> path = new ArrayList<>(List.of(i));
                    path.addAll(inner);
                    return path;
                }
            }
        }
        return null;
    }

    /** A register holding a shape whose element 0 is the row count of the tensors mapped to it, and the shape's rank. */
    private record RowShape(int register, int rank) {}

    /**
     * Straight-line knowledge for {@link #rowsPacked}: the row shape of each row-carrying register, and the results of
     * each shape function already called on a row shape. Forgotten at every branch, so no arm relies on a register
     * that only another arm set.
     */
    private final Map<Integer, RowShape> rowShapes = new HashMap<>();
    private final Map<List<Integer>, List<Integer>> shapeFunctionCalls = new HashMap<>();

    /** Straight-line knowledge for {@link #widthPacked}: the register holding the shape of each register already read. */
    private final Map<Integer, Integer> sizeShapes = new HashMap<>();

    private void forgetRowShapes() {
        rowShapes.clear();
        sizeShapes.clear();
        shapeFunctionCalls.clear();
    }

    /** Storage and a tensor for a kernel result of static type {@code t}, of call {@code c}. */
    private int staticResult(TensorType t, Call c) {
        long[] shape = staticShape(t, c);
        long bytes = new TensorSpec("out", java.util.Arrays.stream(shape).mapToInt(d -> (int) d).boxed().toList(), t.dtype()).byteSize();
        if (bytes == 0) throw unsupported("a kernel with an empty result " + t + " (empty tensors are folded only by the graph executor)", null, c.span());
        int size = fresh();
        add(new Instruction.LoadConsti(bytes, size));
        int storage = fresh();
        add(new Instruction.AllocStorage(size, ALIGNMENT, t.dtype(), storage));
        int tensor = fresh();
        add(new Instruction.AllocTensor(storage, 0, shape, t.dtype(), tensor));
        storageOf.put(tensor, storage);
        return tensor;
    }

    private int regroup(Type t, List<Integer> flat, int[] next) {
        if (!(t instanceof TupleType tt)) return flat.get(next[0]++);
        List<Integer> fields = new ArrayList<>();
        for (Type f : tt.fields()) fields.add(regroup(f, flat, next));
        int dst = fresh();
        add(new Instruction.AllocADT(0, fields, dst));
        return dst;
    }

    private void flatten(Type t, List<TensorType> out, Call c) {
        switch (t) {
            case TensorType tt -> out.add(tt);
            case TupleType tt -> tt.fields().forEach(f -> flatten(f, out, c));
            default -> throw unsupported("a fused call whose result has type " + t, null, c.span());
        }
    }

    private long[] staticShape(TensorType t, Call c) {
        long[] shape = new long[t.shape().size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(t.shape().get(i) instanceof Dim.Int(long v)) || v > Integer.MAX_VALUE) {
                throw unsupported("a kernel result of dynamic shape " + t + " (dynamic shapes are the next slice of issue 19)", null, c.span());
            }
            shape[i] = v;
        }
        return shape;
    }

    private VmException unsupported(String what, Var var, Span span) {
        return new VmException("the VM compiler does not support " + what + (var == null ? "" : ", bound to %" + var.name()) + " in @" + name + where(span));
    }

    private static String where(Span span) {
        return span == null || !span.isKnown() ? "" : " at " + span;
    }
}
