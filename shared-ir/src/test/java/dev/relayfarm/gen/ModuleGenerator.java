package dev.relayfarm.gen;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * One run of the random module generator (see {@link RandomModules}). Recursion here is bounded by
 * {@link RandomModules.Options#maxDepth()}, so plain recursive descent is fine.
 *
 * <p>Scoping is tracked with two stacks (value variables, type variables); a binder is pushed for
 * exactly the sub-expressions Relay puts it in scope for, and popped afterwards. Sub-expressions
 * used twice (DAG sharing) are generated without binders, because a binder occurring twice in one
 * program is ill-formed.
 */
final class ModuleGenerator {
    /** Operators with their usual arity; the names are real Relay operators. */
    private record OpSig(String name, int arity) {}

    private static final List<OpSig> OPS = List.of(
            new OpSig("add", 2), new OpSig("subtract", 2), new OpSig("multiply", 2), new OpSig("divide", 2),
            new OpSig("less", 2), new OpSig("equal", 2), new OpSig("nn.relu", 1), new OpSig("nn.conv2d", 2),
            new OpSig("nn.dense", 2), new OpSig("nn.bias_add", 2), new OpSig("nn.softmax", 1),
            new OpSig("nn.batch_norm", 5), new OpSig("concatenate", 1), new OpSig("split", 1),
            new OpSig("reshape", 1), new OpSig("transpose", 1), new OpSig("sum", 1), new OpSig("mean", 1),
            new OpSig("tanh", 1), new OpSig("sigmoid", 1), new OpSig("exp", 1), new OpSig("cast", 1),
            new OpSig("zeros", 0), new OpSig("image.resize2d", 1), new OpSig("nn.max_pool2d", 1));

    private static final List<String> ATTR_KEYS = List.of(
            "axis", "axes", "padding", "strides", "dilation", "groups", "channels", "kernel_size", "data_layout",
            "kernel_layout", "out_dtype", "epsilon", "center", "scale", "keepdims", "exclude", "units", "newshape",
            "indices_or_sections", "method", "alpha", "rate", "shape", "dtype", "mode");

    /** Var name hints; includes names a printer might invent when renaming ({@code x1}, {@code x_1}). */
    private static final List<String> VAR_NAMES = List.of(
            "x", "y", "z", "a", "b", "acc", "tmp", "data", "weight", "x1", "x_1", "f", "k", "out", "hd", "tl");

    private static final List<String> TYPE_VAR_NAMES = List.of("A", "B", "T", "T1", "Elem");

    private static final List<String> SYM_DIMS = List.of("n", "m", "batch", "h");

    private static final List<String> ADT_NAMES = List.of("List", "Tree", "Opt", "Stream", "Either");

    private static final List<String> CTOR_NAMES = List.of(
            "Nil", "Cons", "Leaf", "Node", "Empty", "Just", "Nothing", "Pair", "Wrap", "Branch", "Tip", "Zero",
            "Succ", "Left", "Right");

    private static final List<String> GLOBAL_NAMES = List.of("helper", "loop", "step", "f", "g", "body_fn", "apply");

    private static final List<DType> DTYPES = List.of(
            DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.BFLOAT16, DType.INT8, DType.INT16, DType.INT32,
            DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64, DType.BOOL);

    private enum Kind {
        LEAF, OP_CALL, GLOBAL_CALL, LOCAL_CALL, CTOR_CALL, FN_LITERAL_CALL, TUPLE, GET_ITEM, LET, IF, FUNCTION,
        MATCH, REF_CREATE, REF_READ, REF_WRITE, SHARED
    }

    private final Random r;
    private final RandomModules.Options options;
    private final List<TypeData> adts = new ArrayList<>();
    private final List<Constructor> ctors = new ArrayList<>();
    private final Map<GlobalVar, Integer> arity = new LinkedHashMap<>();
    private final List<Var> scope = new ArrayList<>();
    /** Variables in scope whose value is a function (let-bound closures, function-typed params). */
    private final Set<Var> callable = new HashSet<>();
    private final List<TypeVar> typeScope = new ArrayList<>();
    private int budget;

    ModuleGenerator(Random r, RandomModules.Options options) {
        this.r = r;
        this.options = options;
    }

    IRModule generate() {
        int nAdts = r.nextInt(options.maxAdts() + 1);
        List<String> ctorPool = new ArrayList<>(CTOR_NAMES);
        for (int i = 0; i < nAdts; i++) adts.add(adt(ADT_NAMES.get(i), ctorPool));
        for (TypeData td : adts) ctors.addAll(td.constructors());

        int nGlobals = 1 + r.nextInt(options.maxGlobals());
        arity.put(new GlobalVar("main"), r.nextInt(4));
        for (int i = 1; i < nGlobals; i++) arity.put(new GlobalVar(GLOBAL_NAMES.get(i - 1)), r.nextInt(4));

        Map<GlobalVar, Function> functions = new LinkedHashMap<>();
        for (GlobalVar gv : arity.keySet()) functions.put(gv, globalFunction(arity.get(gv)));
        Map<GlobalTypeVar, TypeData> types = new LinkedHashMap<>();
        for (TypeData td : adts) types.put(td.header(), td);
        return IRModule.of(functions, types);
    }

    // ---------------------------------------------------------------- ADTs

    private TypeData adt(String name, List<String> ctorPool) {
        GlobalTypeVar header = new GlobalTypeVar(name);
        List<TypeVar> params = new ArrayList<>();
        int nParams = r.nextInt(3);
        for (int i = 0; i < nParams; i++) params.add(TypeVar.fresh(TYPE_VAR_NAMES.get(i)));
        Type self = params.isEmpty() ? header : new TypeCall(header, List.copyOf(params));
        typeScope.addAll(params);
        List<Constructor> cs = new ArrayList<>();
        int nCtors = 1 + r.nextInt(3);
        for (int tag = 0; tag < nCtors; tag++) {
            List<Type> inputs = new ArrayList<>();
            // The first constructor is a base case (no self-reference) so values can be built.
            int nInputs = r.nextInt(tag == 0 ? 2 : 4);
            for (int i = 0; i < nInputs; i++) {
                int pick = r.nextInt(5);
                if (tag > 0 && pick == 0) inputs.add(self);
                else if (pick == 1 && !params.isEmpty()) inputs.add(params.get(r.nextInt(params.size())));
                else inputs.add(type(1));
            }
            cs.add(new Constructor(ctorPool.remove(r.nextInt(ctorPool.size())), inputs, header, tag));
        }
        typeScope.removeAll(params);
        return new TypeData(header, params, cs);
    }

    // ---------------------------------------------------------------- types

    private Type type(int depth) {
        int pick = r.nextInt(depth <= 0 ? 2 : 100);
        if (depth <= 0) return pick == 0 && !typeScope.isEmpty() ? pickFrom(typeScope) : tensorType();
        if (pick < 45) return tensorType();
        if (pick < 55 && !typeScope.isEmpty()) return pickFrom(typeScope);
        if (pick < 65) {
            int n = r.nextInt(4);
            List<Type> fields = new ArrayList<>();
            for (int i = 0; i < n; i++) fields.add(type(depth - 1));
            return new TupleType(fields);
        }
        if (pick < 75) return funcType(depth);
        if (pick < 88 && !adts.isEmpty()) return adtType(pickFrom(adts), depth);
        if (pick < 95) return new RefType(type(depth - 1));
        return tensorType();
    }

    private FuncType funcType(int depth) {
        List<TypeVar> params = new ArrayList<>();
        if (r.nextInt(5) == 0) params.add(TypeVar.fresh(unshadowed(pickFrom(TYPE_VAR_NAMES))));
        typeScope.addAll(params);
        List<Type> args = new ArrayList<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) args.add(type(depth - 1));
        Type ret = type(depth - 1);
        typeScope.removeAll(params);
        return new FuncType(params, args, ret, List.of());
    }

    private Type adtType(TypeData td, int depth) {
        if (td.typeParams().isEmpty()) return td.header();
        List<Type> args = new ArrayList<>();
        for (int i = 0; i < td.typeParams().size(); i++) args.add(type(depth - 1));
        return new TypeCall(td.header(), args);
    }

    private TensorType tensorType() {
        int rank = r.nextInt(10) < 3 ? 0 : 1 + r.nextInt(3);
        List<Dim> shape = new ArrayList<>();
        for (int i = 0; i < rank; i++) shape.add(dim());
        return new TensorType(shape, dtype());
    }

    private Dim dim() {
        int pick = r.nextInt(100);
        if (pick < 65) return Dim.of(1 + r.nextInt(64));
        if (pick < 78) return Dim.sym(pickFrom(SYM_DIMS));
        if (pick < 88) return Dim.ANY;
        // Arithmetic dims as a relation would produce them: 2 * n, n + 1, (n - 1) / 2, n % 4, n * m.
        Dim.BinOp op = Dim.BinOp.values()[r.nextInt(Dim.BinOp.values().length)];
        Dim lhs = r.nextBoolean() ? Dim.sym(pickFrom(SYM_DIMS)) : new Dim.Bin(Dim.BinOp.SUB, Dim.sym(pickFrom(SYM_DIMS)), Dim.of(1));
        Dim rhs = r.nextInt(4) == 0 ? Dim.sym(pickFrom(SYM_DIMS)) : Dim.of(1 + r.nextInt(8));
        return r.nextInt(5) == 0 ? new Dim.Bin(op, rhs, lhs) : new Dim.Bin(op, lhs, rhs);
    }

    private DType dtype() {
        DType d = pickFrom(DTYPES);
        if (r.nextInt(20) == 0) return d.withLanes(new int[] {2, 4, 8}[r.nextInt(3)]);
        return d;
    }

    // ---------------------------------------------------------------- functions

    private Function globalFunction(int nParams) {
        scope.clear();
        callable.clear();
        typeScope.clear();
        budget = options.nodeBudget();
        List<TypeVar> typeParams = typeParams(4);
        typeScope.addAll(typeParams);
        List<Var> params = new ArrayList<>();
        for (int i = 0; i < nParams; i++) params.add(param(8));
        Type ret = r.nextBoolean() ? type(2) : null;
        Attrs attrs = r.nextInt(8) == 0 ? functionAttrs() : Attrs.EMPTY;
        bind(params);
        Expr body = expr(options.maxDepth(), true);
        unbind(params);
        typeScope.removeAll(typeParams);
        return new Function(params, body, ret, typeParams, attrs, Span.NONE);
    }

    /** A closure; {@code self}, when not null, is the let variable it is bound to (recursive local function). */
    private Function closure(int depth) {
        List<TypeVar> typeParams = typeParams(5);
        typeScope.addAll(typeParams);
        List<Var> params = new ArrayList<>();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) params.add(param(7));
        Type ret = r.nextInt(3) == 0 ? type(2) : null;
        Attrs attrs = r.nextInt(4) == 0 ? functionAttrs() : Attrs.EMPTY;
        bind(params);
        Expr body = expr(depth - 1, true);
        unbind(params);
        typeScope.removeAll(typeParams);
        return new Function(params, body, ret, typeParams, attrs, Span.NONE);
    }

    private List<TypeVar> typeParams(int oneIn) {
        if (r.nextInt(oneIn) != 0) return List.of();
        List<TypeVar> out = new ArrayList<>();
        int n = 1 + r.nextInt(2);
        // Reusing an outer type variable's name shadows it; a printer has to cope.
        Set<String> siblings = new HashSet<>();
        for (int i = 0; i < n; i++) {
            boolean shadow = i == 0 && !typeScope.isEmpty() && r.nextInt(3) == 0;
            String name = unshadowed(shadow ? pickFrom(typeScope).name() : TYPE_VAR_NAMES.get(i), siblings);
            siblings.add(name);
            out.add(TypeVar.fresh(name));
        }
        return out;
    }

    private String unshadowed(String name) {
        return unshadowed(name, Set.of());
    }

    /**
     * {@code name} unless a sibling parameter has it, or with shadowing switched off, an enclosing
     * type parameter; then the first free {@code name2, name3, ...}.
     */
    private String unshadowed(String name, Set<String> siblings) {
        Set<String> taken = new HashSet<>(siblings);
        if (!options.shadowTypeVars()) for (TypeVar t : typeScope) taken.add(t.name());
        String out = name;
        for (int k = 2; taken.contains(out); k++) out = name + k;
        return out;
    }

    private Var param(int annotatedOutOf10) {
        Type ann = r.nextInt(10) < annotatedOutOf10 ? type(2) : null;
        Var v = Var.fresh(varName(), ann);
        if (ann instanceof FuncType) callable.add(v);
        return v;
    }

    private Attrs functionAttrs() {
        return switch (r.nextInt(4)) {
            case 0, 1 -> Attrs.of(Function.PRIMITIVE, AttrValue.of(1L));
            case 2 -> Attrs.of(Function.PRIMITIVE, AttrValue.of(1L)).with("Composite", AttrValue.of("nn.conv2d_bias_relu"));
            default -> attrs();
        };
    }

    // ---------------------------------------------------------------- expressions

    private Expr expr(int depth, boolean binders) {
        budget--;
        if (depth <= 0 || budget <= 0) return leaf();
        Kind kind = kind(binders);
        return switch (kind) {
            case LEAF -> leaf();
            case OP_CALL -> opCall(depth, binders);
            case GLOBAL_CALL -> {
                GlobalVar gv = pickFrom(new ArrayList<>(arity.keySet()));
                yield new Call(gv, args(arity.get(gv), depth, binders));
            }
            case LOCAL_CALL -> {
                List<Var> fs = scope.stream().filter(callable::contains).toList();
                if (fs.isEmpty()) yield opCall(depth, binders);
                Var f = pickFrom(fs);
                int n = f.annotation() instanceof FuncType ft ? ft.argTypes().size() : r.nextInt(3);
                yield new Call(f, args(n, depth, binders));
            }
            case CTOR_CALL -> {
                if (ctors.isEmpty()) yield opCall(depth, binders);
                Constructor c = pickFrom(ctors);
                yield new Call(c, args(c.inputs().size(), depth, binders));
            }
            case FN_LITERAL_CALL -> {
                Function f = closure(depth);
                yield new Call(f, args(f.params().size(), depth, binders));
            }
            case TUPLE -> {
                int n = r.nextInt(4);
                List<Expr> fields = new ArrayList<>();
                for (int i = 0; i < n; i++) fields.add(expr(depth - 1, binders));
                yield new Tuple(fields);
            }
            case GET_ITEM -> {
                Expr t = expr(depth - 1, binders);
                int index = t instanceof Tuple tu && !tu.fields().isEmpty() ? r.nextInt(tu.fields().size()) : r.nextInt(3);
                yield new TupleGetItem(t, index);
            }
            case LET -> let(depth);
            case IF -> new If(condition(depth, binders), expr(depth - 1, binders), expr(depth - 1, binders));
            case FUNCTION -> closure(depth);
            case MATCH -> match(depth);
            case REF_CREATE -> new RefCreate(expr(depth - 1, binders));
            case REF_READ -> new RefRead(expr(depth - 1, binders));
            case REF_WRITE -> new RefWrite(expr(depth - 1, binders), expr(depth - 1, binders));
            case SHARED -> {
                // The same object in two places: the program is a DAG, not a tree.
                Expr shared = expr(Math.min(depth - 1, 2), false);
                yield r.nextBoolean()
                        ? new Tuple(List.of(shared, shared))
                        : new Call(Op.get(r.nextBoolean() ? "add" : "multiply"), List.of(shared, shared));
            }
        };
    }

    private Kind kind(boolean binders) {
        while (true) {
            int pick = r.nextInt(100);
            Kind k;
            if (pick < 10) k = Kind.LEAF;
            else if (pick < 26) k = Kind.OP_CALL;
            else if (pick < 31) k = Kind.GLOBAL_CALL;
            else if (pick < 35) k = Kind.LOCAL_CALL;
            else if (pick < 40) k = Kind.CTOR_CALL;
            else if (pick < 42) k = Kind.FN_LITERAL_CALL;
            else if (pick < 47) k = Kind.TUPLE;
            else if (pick < 51) k = Kind.GET_ITEM;
            else if (pick < 66) k = Kind.LET;
            else if (pick < 71) k = Kind.IF;
            else if (pick < 76) k = Kind.FUNCTION;
            else if (pick < 83) k = Kind.MATCH;
            else if (pick < 86) k = Kind.REF_CREATE;
            else if (pick < 89) k = Kind.REF_READ;
            else if (pick < 92) k = Kind.REF_WRITE;
            else k = Kind.SHARED;
            boolean bindsSomething = k == Kind.LET || k == Kind.FUNCTION || k == Kind.MATCH || k == Kind.FN_LITERAL_CALL;
            if (binders || !bindsSomething) return k;
        }
    }

    private List<Expr> args(int n, int depth, boolean binders) {
        List<Expr> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) out.add(expr(depth - 1, binders));
        return out;
    }

    private Expr opCall(int depth, boolean binders) {
        OpSig op = pickFrom(OPS);
        List<Expr> args;
        if (op.name.equals("concatenate")) {
            args = List.of(new Tuple(args(1 + r.nextInt(3), depth, binders)));
        } else {
            args = args(op.arity, depth, binders);
        }
        Attrs attrs = r.nextInt(10) < 4 ? attrs() : Attrs.EMPTY;
        List<Type> typeArgs = new ArrayList<>();
        if (r.nextInt(12) == 0) {
            int n = 1 + r.nextInt(2);
            for (int i = 0; i < n; i++) typeArgs.add(type(2));
        }
        return new Call(Op.get(op.name), args, attrs, typeArgs, Span.NONE);
    }

    private Expr condition(int depth, boolean binders) {
        return switch (r.nextInt(3)) {
            case 0 -> new Constant(NDArray.scalar(r.nextBoolean()));
            case 1 -> new Call(Op.get("less"), List.of(expr(depth - 1, binders), expr(depth - 1, binders)));
            default -> expr(depth - 1, binders);
        };
    }

    private Expr let(int depth) {
        Type ann = r.nextInt(3) == 0 ? type(2) : null;
        Var v = Var.fresh(varName(), ann);
        Expr value;
        if (r.nextInt(4) == 0) {
            // A local function; its let variable is in scope inside it, so it may call itself.
            bind(List.of(v));
            callable.add(v);
            value = closure(depth);
        } else {
            value = expr(depth - 1, true);
            bind(List.of(v));
        }
        // Let bodies continue the chain more often than they end it, as real programs do.
        Expr body = expr(r.nextInt(3) == 0 ? depth - 1 : depth, true);
        unbind(List.of(v));
        return new Let(v, value, body);
    }

    private Expr match(int depth) {
        Expr data;
        List<Clause> clauses = new ArrayList<>();
        if (adts.isEmpty() || r.nextInt(5) == 0) {
            // Match on a tuple: tuple patterns and catch-alls.
            data = expr(depth - 1, true);
            int n = 1 + r.nextInt(2);
            for (int i = 0; i < n; i++) {
                List<Var> bound = new ArrayList<>();
                int arity = r.nextInt(3);
                List<Pattern> fields = new ArrayList<>();
                for (int j = 0; j < arity; j++) fields.add(pattern(type(1), 2, bound));
                clauses.add(clause(new Pattern.TuplePattern(fields), bound, depth));
            }
        } else {
            TypeData td = pickFrom(adts);
            data = expr(depth - 1, true);
            int n = 1 + r.nextInt(3);
            for (int i = 0; i < n; i++) {
                List<Var> bound = new ArrayList<>();
                Pattern p;
                if (i == n - 1 && n > 1 && r.nextInt(3) == 0) p = r.nextBoolean() ? Pattern.WILDCARD : bindPattern(null, bound);
                else p = ctorPattern(pickFrom(td.constructors()), 2, bound);
                clauses.add(clause(p, bound, depth));
            }
        }
        return new Match(data, clauses, r.nextInt(10) < 7, Span.NONE);
    }

    private Clause clause(Pattern p, List<Var> bound, int depth) {
        bind(bound);
        Expr body = expr(depth - 1, true);
        unbind(bound);
        return new Clause(p, body);
    }

    private Pattern ctorPattern(Constructor c, int depth, List<Var> bound) {
        List<Pattern> args = new ArrayList<>();
        for (Type t : c.inputs()) args.add(pattern(t, depth - 1, bound));
        return new Pattern.Ctor(c, args);
    }

    /** A sub-pattern for a field of type {@code t}: nested constructor / tuple patterns follow the type. */
    private Pattern pattern(Type t, int depth, List<Var> bound) {
        int pick = r.nextInt(10);
        if (pick < 3) return Pattern.WILDCARD;
        if (depth > 0 && pick >= 7) {
            Type head = t instanceof TypeCall tc ? tc.func() : t;
            for (TypeData td : adts) {
                if (td.header().equals(head)) return ctorPattern(pickFrom(td.constructors()), depth, bound);
            }
            if (t instanceof TupleType tt) {
                List<Pattern> fields = new ArrayList<>();
                for (Type f : tt.fields()) fields.add(pattern(f, depth - 1, bound));
                return new Pattern.TuplePattern(fields);
            }
        }
        return bindPattern(t instanceof TensorType && r.nextBoolean() ? t : null, bound);
    }

    /** Pattern variables of one pattern get distinct names; they may shadow outer variables. */
    private Pattern bindPattern(Type ann, List<Var> bound) {
        String name = varName();
        Set<String> taken = new HashSet<>();
        for (Var v : bound) taken.add(v.name());
        for (int i = 0; taken.contains(name); i++) name = "p" + i;
        Var v = Var.fresh(name, ann);
        bound.add(v);
        return new Pattern.Bind(v);
    }

    private Expr leaf() {
        int pick = r.nextInt(100);
        if (pick < 50 && !scope.isEmpty()) return pickFrom(scope);
        if (pick < 55) return pickFrom(new ArrayList<>(arity.keySet()));
        if (pick < 60 && !ctors.isEmpty()) {
            Constructor c = pickFrom(ctors);
            // A nullary constructor is a value when called with no arguments; the bare constructor is a function.
            return c.inputs().isEmpty() && r.nextBoolean() ? new Call(c, List.of()) : c;
        }
        return constant();
    }

    // ---------------------------------------------------------------- constants and attributes

    private Constant constant() {
        DType dt = dtype();
        int[] shape;
        int pick = r.nextInt(10);
        if (pick < 6) shape = new int[0];
        else if (pick < 9) shape = new int[] {1 + r.nextInt(3)};
        else shape = new int[] {1 + r.nextInt(2), 1 + r.nextInt(3)};
        NDArray a = NDArray.zeros(dt, shape);
        for (int i = 0; i < a.elementCount(); i++) fill(a, i);
        return new Constant(a);
    }

    private void fill(NDArray a, int i) {
        DType dt = a.dtype();
        switch (dt.code()) {
            case BOOL -> a.setLong(i, r.nextInt(2));
            case INT, UINT -> {
                long min = dt.code() == DType.Code.UINT ? 0 : dt.bits() == 64 ? Long.MIN_VALUE : -(1L << (dt.bits() - 1));
                long max = dt.code() == DType.Code.UINT ? (dt.bits() == 64 ? -1L : (1L << dt.bits()) - 1) : dt.bits() == 64 ? Long.MAX_VALUE : (1L << (dt.bits() - 1)) - 1;
                long v = switch (r.nextInt(6)) {
                    case 0 -> 0;
                    case 1 -> min;
                    case 2 -> max; // for uint64 this is all ones, i.e. 2^64 - 1
                    case 3 -> r.nextLong(); // wraps to the dtype width on store
                    default -> r.nextInt(201) - (dt.code() == DType.Code.UINT ? 0 : 100);
                };
                a.setLong(i, dt.code() == DType.Code.UINT && v < 0 && dt.bits() < 64 ? -v : v);
            }
            case FLOAT, BFLOAT -> {
                if (dt.bits() == 16 && r.nextInt(3) == 0) {
                    // Any finite 16-bit pattern, subnormals and -0 included.
                    short bits;
                    int expMask = dt.code() == DType.Code.BFLOAT ? 0x7f80 : 0x7c00;
                    do bits = (short) r.nextInt(1 << 16); while ((bits & expMask) == expMask);
                    a.shortData()[i] = bits;
                    return;
                }
                double v = switch (r.nextInt(10)) {
                    case 0 -> 0.0;
                    case 1 -> -0.0;
                    case 2 -> 1.0;
                    case 3 -> -2.5;
                    case 4 -> 1e-5;
                    case 5 -> r.nextInt(1000);
                    case 6 -> dt.bits() == 64 ? Double.MIN_VALUE * (1 + r.nextInt(10)) : Float.MIN_VALUE * (1 + r.nextInt(10));
                    case 7 -> dt.bits() == 64 ? Double.MAX_VALUE / (1 + r.nextInt(4)) : 3.0e38 / (1 + r.nextInt(4));
                    default -> r.nextGaussian() * Math.pow(10, r.nextInt(12) - 6);
                };
                a.setDouble(i, v);
                // Non-finite values are out of scope here; narrow dtypes overflow large doubles to inf.
                if (Double.isInfinite(a.getDouble(i))) a.setDouble(i, Math.copySign(1000.0, v));
            }
        }
    }

    private Attrs attrs() {
        Attrs a = Attrs.EMPTY;
        int n = 1 + r.nextInt(4);
        for (int i = 0; i < n; i++) a = a.with(pickFrom(ATTR_KEYS), attrValue(2));
        return a;
    }

    private AttrValue attrValue(int depth) {
        return switch (r.nextInt(depth > 0 ? 7 : 5)) {
            case 0 -> AttrValue.of(switch (r.nextInt(4)) {
                case 0 -> Long.MIN_VALUE;
                case 1 -> Long.MAX_VALUE;
                default -> (long) r.nextInt(200) - 50;
            });
            case 1 -> AttrValue.of(switch (r.nextInt(6)) {
                case 0 -> 1e-5;
                case 1 -> 3.0; // integral floats must stay floats
                case 2 -> -0.0;
                case 3 -> 1e300;
                default -> r.nextGaussian();
            });
            case 2 -> AttrValue.of(pickFrom(List.of("NCHW", "OIHW", "float32", "", "nearest", "with \"quotes\"",
                    "back\\slash", "tab\there\nnewline", "unicode µ∑ 中")));
            case 3 -> AttrValue.of(r.nextBoolean());
            case 4 -> AttrValue.NONE;
            default -> {
                int n = r.nextInt(4);
                List<AttrValue> vs = new ArrayList<>();
                for (int i = 0; i < n; i++) vs.add(attrValue(depth - 1));
                yield new AttrValue.ListValue(vs);
            }
        };
    }

    // ---------------------------------------------------------------- scope helpers

    private String varName() {
        // One time in four reuse the name of a variable in scope: a new variable shadowing it.
        if (!scope.isEmpty() && r.nextInt(4) == 0) return pickFrom(scope).name();
        return pickFrom(VAR_NAMES);
    }

    private void bind(List<Var> vars) {
        scope.addAll(vars);
    }

    private void unbind(List<Var> vars) {
        for (int i = vars.size() - 1; i >= 0; i--) {
            Var v = vars.get(i);
            scope.remove(scope.lastIndexOf(v));
            callable.remove(v);
        }
    }

    private <T> T pickFrom(List<T> list) {
        return list.get(r.nextInt(list.size()));
    }
}
