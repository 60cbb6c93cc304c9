package dev.relayfarm.serde;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.IncompleteType;
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
import dev.relayfarm.ir.TypeRelation;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Streams one module as a version-1 document. Expression nodes are emitted in post-order as an
 * explicit-stack walk finishes them, so the walk never recurses per node; the tables that nodes refer
 * into (vars, type variables, span files) are collected while emitting and written after the nodes.
 * Types, patterns and attribute values are written recursively: they are shallow by nature.
 */
final class IrJsonWriter {
    private final IRModule module;
    private final BlobSink sink;
    private final IrJson.Options options;
    private final JsonGenerator g;

    /** Node ids by identity, so a shared sub-expression is written once. */
    private final IdentityHashMap<Expr, Integer> nodeIds = new IdentityHashMap<>();
    /** Ops, globals and constructors are values (equal by name): one entry per distinct value. */
    private final HashMap<Expr, Integer> valueNodeIds = new HashMap<>();
    private int nodeCount;

    private final IdentityHashMap<Var, Integer> varIds = new IdentityHashMap<>();
    private final List<Var> vars = new ArrayList<>();
    /** Type variables are records equal by (name, kind, id): equal means the same variable. */
    private final HashMap<TypeVar, Integer> typeVarIds = new HashMap<>();
    private final List<TypeVar> typeVars = new ArrayList<>();
    private final HashMap<String, Integer> fileIds = new HashMap<>();
    private final List<String> files = new ArrayList<>();

    IrJsonWriter(IRModule module, BlobSink sink, IrJson.Options options, JsonGenerator g) {
        this.module = module;
        this.sink = sink;
        this.options = options;
        this.g = g;
    }

    void write() throws IOException {
        g.writeStartObject();
        g.writeStringField("format", IrJson.FORMAT);
        g.writeNumberField("version", IrJson.VERSION);

        g.writeArrayFieldStart("adts");
        for (TypeData td : module.types().values()) adt(td);
        g.writeEndArray();

        g.writeArrayFieldStart("nodes");
        List<Integer> roots = new ArrayList<>();
        for (Function f : module.functions().values()) roots.add(emitReachable(f));
        g.writeEndArray();

        g.writeArrayFieldStart("functions");
        int i = 0;
        for (GlobalVar gv : module.functions().keySet()) {
            g.writeStartObject();
            g.writeStringField("name", gv.name());
            g.writeNumberField("node", roots.get(i++));
            g.writeEndObject();
        }
        g.writeEndArray();

        // Var annotations can mention type variables and var spans files: write vars before those tables.
        g.writeArrayFieldStart("vars");
        for (int v = 0; v < vars.size(); v++) varEntry(vars.get(v));
        g.writeEndArray();

        g.writeArrayFieldStart("typeVars");
        for (TypeVar tv : typeVars) {
            g.writeStartObject();
            g.writeStringField("name", tv.name());
            g.writeStringField("kind", tv.kind().name());
            g.writeNumberField("id", tv.id());
            g.writeEndObject();
        }
        g.writeEndArray();

        g.writeArrayFieldStart("files");
        for (String f : files) g.writeString(f);
        g.writeEndArray();

        g.writeEndObject();
        g.flush();
    }

    // ---- expressions ---------------------------------------------------------------------------

    private Integer knownId(Expr e) {
        Integer id = nodeIds.get(e);
        if (id == null && isValueNode(e)) id = valueNodeIds.get(e);
        return id;
    }

    private static boolean isValueNode(Expr e) {
        return e instanceof Op || e instanceof GlobalVar || e instanceof Constructor;
    }

    /** Emits every not-yet-written node reachable from {@code root}, children first; returns root's id. */
    private int emitReachable(Expr root) throws IOException {
        Integer known = knownId(root);
        if (known != null) return known;
        ArrayDeque<Expr> nodes = new ArrayDeque<>();
        ArrayDeque<List<Expr>> kids = new ArrayDeque<>();
        ArrayDeque<int[]> next = new ArrayDeque<>();
        nodes.push(root);
        kids.push(root.children());
        next.push(new int[] {0});
        while (!nodes.isEmpty()) {
            List<Expr> children = kids.peek();
            int[] i = next.peek();
            if (i[0] < children.size()) {
                Expr child = children.get(i[0]++);
                // Expressions are acyclic, so a child not yet written is not on the stack either.
                if (knownId(child) == null) {
                    nodes.push(child);
                    kids.push(child.children());
                    next.push(new int[] {0});
                }
            } else {
                Expr e = nodes.pop();
                kids.pop();
                next.pop();
                int id = nodeCount++;
                nodeIds.put(e, id);
                if (isValueNode(e)) valueNodeIds.put(e, id);
                node(e);
            }
        }
        return nodeIds.get(root);
    }

    private int id(Expr child) {
        return knownId(child);
    }

    private void node(Expr e) throws IOException {
        g.writeStartObject();
        g.writeStringField("node", kindName(e));
        switch (e) {
            case Var v -> g.writeNumberField("var", varId(v));
            case GlobalVar gv -> g.writeStringField("name", gv.name());
            case Op o -> g.writeStringField("name", o.name());
            case Constructor c -> constructorRef(c);
            case Constant c -> constant(c.data());
            case Tuple t -> ids("fields", t.fields());
            case TupleGetItem t -> {
                g.writeNumberField("tuple", id(t.tuple()));
                g.writeNumberField("index", t.index());
            }
            case Let l -> {
                g.writeNumberField("var", varId(l.var()));
                g.writeNumberField("value", id(l.value()));
                g.writeNumberField("body", id(l.body()));
            }
            case If i -> {
                g.writeNumberField("cond", id(i.cond()));
                g.writeNumberField("then", id(i.thenBranch()));
                g.writeNumberField("else", id(i.elseBranch()));
            }
            case Function f -> {
                if (!f.typeParams().isEmpty()) {
                    g.writeArrayFieldStart("typeParams");
                    for (TypeVar tv : f.typeParams()) g.writeNumber(typeVarId(tv));
                    g.writeEndArray();
                }
                g.writeArrayFieldStart("params");
                for (Var p : f.params()) g.writeNumber(varId(p));
                g.writeEndArray();
                if (f.retType() != null) {
                    g.writeFieldName("retType");
                    type(f.retType());
                }
                attrsField(f.attrs());
                g.writeNumberField("body", id(f.body()));
            }
            case Call c -> {
                g.writeNumberField("callee", id(c.callee()));
                ids("args", c.args());
                attrsField(c.attrs());
                if (!c.typeArgs().isEmpty()) {
                    g.writeArrayFieldStart("typeArgs");
                    for (Type t : c.typeArgs()) type(t);
                    g.writeEndArray();
                }
            }
            case Match m -> {
                g.writeNumberField("data", id(m.data()));
                g.writeBooleanField("complete", m.complete());
                g.writeArrayFieldStart("clauses");
                for (Clause cl : m.clauses()) {
                    g.writeStartObject();
                    g.writeFieldName("pattern");
                    pattern(cl.pattern());
                    g.writeNumberField("body", id(cl.body()));
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
            case RefCreate r -> g.writeNumberField("value", id(r.value()));
            case RefRead r -> g.writeNumberField("ref", id(r.ref()));
            case RefWrite r -> {
                g.writeNumberField("ref", id(r.ref()));
                g.writeNumberField("value", id(r.value()));
            }
        }
        // A Var's span belongs to the variable (its table entry), not to each use.
        if (!(e instanceof Var)) span(e.span());
        g.writeEndObject();
    }

    static String kindName(Expr e) {
        return switch (e) {
            case Var v -> "Var";
            case GlobalVar gv -> "GlobalVar";
            case Constant c -> "Constant";
            case Tuple t -> "Tuple";
            case TupleGetItem t -> "TupleGetItem";
            case Let l -> "Let";
            case If i -> "If";
            case Function f -> "Function";
            case Call c -> "Call";
            case Op o -> "Op";
            case Match m -> "Match";
            case Constructor c -> "Constructor";
            case RefCreate r -> "RefCreate";
            case RefRead r -> "RefRead";
            case RefWrite r -> "RefWrite";
        };
    }

    private void ids(String field, List<Expr> children) throws IOException {
        g.writeArrayFieldStart(field);
        for (Expr c : children) g.writeNumber(id(c));
        g.writeEndArray();
    }

    private void constant(NDArray a) throws IOException {
        g.writeStringField("dtype", a.dtype().toString());
        g.writeArrayFieldStart("shape");
        for (int d : a.shape()) g.writeNumber(d);
        g.writeEndArray();
        if (a.byteSize() > options.inlineLimitBytes()) {
            byte[] blob = TensorBlob.encode(a);
            String sha = a.sha256();
            sink.put(sha, blob);
            g.writeStringField("blob", sha);
        } else {
            // Base64 as a plain string (standard alphabet, padded), so tree and text forms agree.
            g.writeStringField("data", java.util.Base64.getEncoder().encodeToString(a.toBytes()));
        }
    }

    /**
     * Constructors are written as (ADT, name) and resolved against the document's ADT table on read,
     * so the module must define the ADT.
     */
    private void constructorRef(Constructor c) throws IOException {
        TypeData td = module.types().get(c.belongsTo());
        if (td == null || !td.constructors().contains(c)) {
            throw new IllegalArgumentException("cannot serialize constructor " + c.name() + ": the module does not define it in type "
                    + c.belongsTo().name());
        }
        g.writeStringField("adt", c.belongsTo().name());
        g.writeStringField("name", c.name());
    }

    private void pattern(Pattern p) throws IOException {
        g.writeStartObject();
        switch (p) {
            case Pattern.Wildcard w -> g.writeStringField("pattern", "Wildcard");
            case Pattern.Bind b -> {
                g.writeStringField("pattern", "Bind");
                g.writeNumberField("var", varId(b.var()));
            }
            case Pattern.Ctor c -> {
                g.writeStringField("pattern", "Ctor");
                constructorRef(c.constructor());
                g.writeArrayFieldStart("args");
                for (Pattern a : c.args()) pattern(a);
                g.writeEndArray();
            }
            case Pattern.TuplePattern t -> {
                g.writeStringField("pattern", "Tuple");
                g.writeArrayFieldStart("fields");
                for (Pattern a : t.fields()) pattern(a);
                g.writeEndArray();
            }
        }
        g.writeEndObject();
    }

    // ---- tables --------------------------------------------------------------------------------

    private int varId(Var v) {
        Integer id = varIds.get(v);
        if (id == null) {
            id = vars.size();
            varIds.put(v, id);
            vars.add(v);
        }
        return id;
    }

    private void varEntry(Var v) throws IOException {
        g.writeStartObject();
        g.writeStringField("name", v.name());
        g.writeNumberField("id", v.id());
        if (v.annotation() != null) {
            g.writeFieldName("type");
            type(v.annotation());
        }
        span(v.span());
        g.writeEndObject();
    }

    private int typeVarId(TypeVar tv) {
        Integer id = typeVarIds.get(tv);
        if (id == null) {
            id = typeVars.size();
            typeVarIds.put(tv, id);
            typeVars.add(tv);
        }
        return id;
    }

    private void span(Span s) throws IOException {
        if (!options.spans() || s.equals(Span.NONE)) return;
        Integer file = fileIds.get(s.file());
        if (file == null) {
            file = files.size();
            fileIds.put(s.file(), file);
            files.add(s.file());
        }
        g.writeArrayFieldStart("span");
        g.writeNumber(file);
        g.writeNumber(s.line());
        g.writeNumber(s.column());
        g.writeEndArray();
    }

    private void adt(TypeData td) throws IOException {
        g.writeStartObject();
        g.writeStringField("name", td.header().name());
        g.writeStringField("kind", td.header().kind().name());
        g.writeArrayFieldStart("typeParams");
        for (TypeVar tv : td.typeParams()) g.writeNumber(typeVarId(tv));
        g.writeEndArray();
        g.writeArrayFieldStart("constructors");
        for (Constructor c : td.constructors()) {
            if (!c.belongsTo().equals(td.header())) {
                throw new IllegalArgumentException("cannot serialize type " + td.name() + ": its constructor " + c.name() + " belongs to "
                        + c.belongsTo().name());
            }
            g.writeStartObject();
            g.writeStringField("name", c.name());
            g.writeNumberField("tag", c.tag());
            g.writeArrayFieldStart("inputs");
            for (Type t : c.inputs()) type(t);
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    // ---- types, dims, attributes ---------------------------------------------------------------

    private void type(Type t) throws IOException {
        g.writeStartObject();
        switch (t) {
            case TensorType tt -> {
                g.writeStringField("type", "Tensor");
                g.writeArrayFieldStart("shape");
                for (Dim d : tt.shape()) dim(d);
                g.writeEndArray();
                g.writeStringField("dtype", tt.dtype().toString());
            }
            case TupleType tt -> {
                g.writeStringField("type", "Tuple");
                types("fields", tt.fields());
            }
            case FuncType ft -> {
                g.writeStringField("type", "Func");
                if (!ft.typeParams().isEmpty()) {
                    g.writeArrayFieldStart("typeParams");
                    for (TypeVar tv : ft.typeParams()) g.writeNumber(typeVarId(tv));
                    g.writeEndArray();
                }
                types("args", ft.argTypes());
                g.writeFieldName("ret");
                type(ft.retType());
                if (!ft.constraints().isEmpty()) {
                    g.writeArrayFieldStart("constraints");
                    for (TypeRelation r : ft.constraints()) {
                        g.writeStartObject();
                        g.writeStringField("relation", r.name());
                        types("args", r.args());
                        g.writeNumberField("numInputs", r.numInputs());
                        attrsField(r.attrs());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                }
            }
            case TypeVar tv -> {
                g.writeStringField("type", "TypeVar");
                g.writeNumberField("ref", typeVarId(tv));
            }
            case GlobalTypeVar gtv -> {
                g.writeStringField("type", "GlobalTypeVar");
                g.writeStringField("name", gtv.name());
                g.writeStringField("kind", gtv.kind().name());
            }
            case TypeCall tc -> {
                g.writeStringField("type", "TypeCall");
                g.writeFieldName("func");
                type(tc.func());
                types("args", tc.args());
            }
            case RefType r -> {
                g.writeStringField("type", "Ref");
                g.writeFieldName("value");
                type(r.value());
            }
            case IncompleteType it -> {
                g.writeStringField("type", "Incomplete");
                g.writeStringField("kind", it.kind().name());
                g.writeNumberField("id", it.id());
            }
        }
        g.writeEndObject();
    }

    private void types(String field, List<? extends Type> ts) throws IOException {
        g.writeArrayFieldStart(field);
        for (Type t : ts) type(t);
        g.writeEndArray();
    }

    private void dim(Dim d) throws IOException {
        switch (d) {
            case Dim.Int i -> g.writeNumber(i.value());
            case Dim.Any a -> g.writeString("?");
            case Dim.Sym s -> {
                g.writeStartObject();
                g.writeStringField("sym", s.name());
                g.writeEndObject();
            }
            case Dim.Bin b -> {
                g.writeStartObject();
                g.writeStringField("op", b.op().name().toLowerCase(java.util.Locale.ROOT));
                g.writeFieldName("lhs");
                dim(b.lhs());
                g.writeFieldName("rhs");
                dim(b.rhs());
                g.writeEndObject();
            }
        }
    }

    /** Writes {@code "attrs": {...}} unless empty (the reader's default). */
    private void attrsField(Attrs attrs) throws IOException {
        if (attrs.isEmpty()) return;
        g.writeObjectFieldStart("attrs");
        for (Map.Entry<String, AttrValue> e : attrs.values().entrySet()) {
            g.writeFieldName(e.getKey());
            attrValue(e.getValue());
        }
        g.writeEndObject();
    }

    private void attrValue(AttrValue v) throws IOException {
        switch (v) {
            case AttrValue.IntValue i -> g.writeNumber(i.value());
            case AttrValue.StringValue s -> g.writeString(s.value());
            case AttrValue.BoolValue b -> g.writeBoolean(b.value());
            case AttrValue.NoneValue n -> g.writeNull();
            case AttrValue.ListValue l -> {
                g.writeStartArray();
                for (AttrValue x : l.values()) attrValue(x);
                g.writeEndArray();
            }
            // Tagged: JSON cannot tell 1.0 from 1 reliably across parsers, and has no NaN or Infinity.
            case AttrValue.FloatValue f -> {
                g.writeStartObject();
                g.writeFieldName("float");
                double d = f.value();
                if (Double.isNaN(d)) g.writeString("NaN");
                else if (d == Double.POSITIVE_INFINITY) g.writeString("Infinity");
                else if (d == Double.NEGATIVE_INFINITY) g.writeString("-Infinity");
                else g.writeNumber(d);
                g.writeEndObject();
            }
        }
    }
}
