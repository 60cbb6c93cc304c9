package dev.relayfarm.serde;

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
import dev.relayfarm.ir.TypeKind;
import dev.relayfarm.ir.TypeRelation;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a version-1 document from a Jackson tree. Tables are read in dependency order (files, type
 * variables, ADTs, vars, nodes, functions); nodes are built in one forward loop over the post-order
 * table, each node's children already built, so reading never recurses per expression node. Every
 * problem is reported with the JSON path of the value at fault.
 */
final class IrJsonReader {
    private static final Set<String> TOP = Set.of("format", "version", "adts", "nodes", "functions", "vars", "typeVars", "files");
    private static final Map<String, Set<String>> NODE_FIELDS = Map.ofEntries(
            Map.entry("Var", Set.of("node", "var")),
            Map.entry("GlobalVar", Set.of("node", "name")),
            Map.entry("Op", Set.of("node", "name")),
            Map.entry("Constructor", Set.of("node", "adt", "name")),
            Map.entry("Constant", Set.of("node", "dtype", "shape", "data", "blob", "span")),
            Map.entry("Tuple", Set.of("node", "fields", "span")),
            Map.entry("TupleGetItem", Set.of("node", "tuple", "index", "span")),
            Map.entry("Let", Set.of("node", "var", "value", "body", "span")),
            Map.entry("If", Set.of("node", "cond", "then", "else", "span")),
            Map.entry("Function", Set.of("node", "typeParams", "params", "retType", "attrs", "body", "span")),
            Map.entry("Call", Set.of("node", "callee", "args", "attrs", "typeArgs", "span")),
            Map.entry("Match", Set.of("node", "data", "complete", "clauses", "span")),
            Map.entry("RefCreate", Set.of("node", "value", "span")),
            Map.entry("RefRead", Set.of("node", "ref", "span")),
            Map.entry("RefWrite", Set.of("node", "ref", "value", "span")));
    private static final Map<String, Set<String>> TYPE_FIELDS = Map.of(
            "Tensor", Set.of("type", "shape", "dtype"),
            "Tuple", Set.of("type", "fields"),
            "Func", Set.of("type", "typeParams", "args", "ret", "constraints"),
            "TypeVar", Set.of("type", "ref"),
            "GlobalTypeVar", Set.of("type", "name", "kind"),
            "TypeCall", Set.of("type", "func", "args"),
            "Ref", Set.of("type", "value"),
            "Incomplete", Set.of("type", "kind", "id"));
    private static final Map<String, Set<String>> PATTERN_FIELDS = Map.of(
            "Wildcard", Set.of("pattern"),
            "Bind", Set.of("pattern", "var"),
            "Ctor", Set.of("pattern", "adt", "name", "args"),
            "Tuple", Set.of("pattern", "fields"));

    private final BlobSource blobs;
    private final List<String> files = new ArrayList<>();
    private final List<TypeVar> typeVars = new ArrayList<>();
    /** Holes are equal by (kind, id); the reader gives each distinct hole one fresh object. */
    private final Map<IncompleteType, IncompleteType> holes = new HashMap<>();
    private final Map<String, Map<String, Constructor>> constructors = new HashMap<>();
    private final List<Var> vars = new ArrayList<>();
    private Expr[] nodes = new Expr[0];
    /** Per node: its nesting as the text parser would count it (see {@link IrJson#MAX_NESTING_DEPTH}). */
    private int[] nesting = new int[0];
    /** Table index of each node read so far, by identity (children are always earlier nodes). */
    private final java.util.IdentityHashMap<Expr, Integer> indexOf = new java.util.IdentityHashMap<>();

    IrJsonReader(BlobSource blobs) {
        this.blobs = blobs;
    }

    IRModule read(JsonCursor doc) {
        doc.object();
        // Format and version first, so a newer document fails with "unsupported version", not with
        // a complaint about a field this reader has never heard of.
        JsonCursor format = doc.field("format");
        if (!format.node.isTextual() || !format.node.textValue().equals(IrJson.FORMAT)) {
            throw format.error("expected \"" + IrJson.FORMAT + "\", got " + JsonCursor.describe(format.node));
        }
        JsonCursor version = doc.field("version");
        if (!version.node.isIntegralNumber() || version.node.longValue() != IrJson.VERSION) {
            throw version.error("unsupported version " + JsonCursor.describe(version.node) + " (this reader reads version " + IrJson.VERSION + ")");
        }
        doc.onlyFields(TOP, "the document");

        for (JsonCursor f : doc.optElements("files")) files.add(f.text());
        for (JsonCursor tv : doc.optElements("typeVars")) typeVars.add(typeVarEntry(tv));

        Map<GlobalTypeVar, TypeData> adts = new LinkedHashMap<>();
        for (JsonCursor a : doc.optElements("adts")) {
            TypeData td = adt(a);
            if (adts.containsKey(td.header())) throw a.field("name").error("type " + td.name() + " is defined twice");
            adts.put(td.header(), td);
        }

        for (JsonCursor v : doc.optElements("vars")) vars.add(varEntry(v));

        List<JsonCursor> table = doc.field("nodes").elements();
        nodes = new Expr[table.size()];
        nesting = new int[table.size()];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = node(table.get(i), i);
            nesting[i] = nesting(nodes[i], i);
            if (nesting[i] > IrJson.MAX_NESTING_DEPTH) {
                throw table.get(i).error("expressions nested deeper than " + IrJson.MAX_NESTING_DEPTH
                        + " levels (functions, ifs, matches, tuples in tuples, lets in let values); the limit is IrJson.MAX_NESTING_DEPTH");
            }
        }

        Map<GlobalVar, Function> functions = new LinkedHashMap<>();
        for (JsonCursor f : doc.field("functions").elements()) {
            f.onlyFields(Set.of("name", "node"), "a function entry");
            GlobalVar gv = new GlobalVar(f.field("name").text());
            JsonCursor ref = f.field("node");
            Expr e = nodes[ref.ref(nodes.length, "node")];
            if (!(e instanceof Function fn)) throw ref.error("global @" + gv.name() + " must be a Function node, got a " + IrJsonWriter.kindName(e));
            if (functions.containsKey(gv)) throw f.field("name").error("global @" + gv.name() + " is defined twice");
            functions.put(gv, fn);
        }
        return IRModule.of(functions, adts);
    }

    /**
     * Nesting of node {@code self} from its children's, in one pass over the post-ordered table:
     * scopes (function bodies, branches, clauses) add a level; a tuple field that is a tuple and a let
     * value that is a let add one (their types and printed text nest); calls and everything else add
     * none, so dataflow chains stay unbounded.
     */
    private int nesting(Expr e, int self) {
        indexOf.putIfAbsent(e, self);
        int deepest = 0;
        for (Expr c : e.children()) {
            Integer ci = indexOf.get(c);
            if (ci == null) continue; // a Var or other leaf shared from the tables, not a node row
            boolean adds = switch (e) {
                case Function f -> true;
                case If i -> true;
                case Match m -> true;
                case Tuple t -> c instanceof Tuple;
                case Let l -> c == l.value() && c instanceof Let;
                default -> false;
            };
            deepest = Math.max(deepest, nesting[ci] + (adds ? 1 : 0));
        }
        return deepest;
    }

    // ---- tables --------------------------------------------------------------------------------

    private TypeVar typeVarEntry(JsonCursor c) {
        c.onlyFields(Set.of("name", "kind", "id"), "a type variable");
        c.field("id").longValue(); // the writer's id: checked for form, then replaced by a fresh one
        return TypeVar.fresh(c.field("name").text(), typeKind(c.field("kind")));
    }

    private Var varEntry(JsonCursor c) {
        c.onlyFields(Set.of("name", "id", "type", "span"), "a var");
        c.field("id").longValue();
        JsonCursor t = c.optField("type");
        return Var.fresh(c.field("name").text(), t == null ? null : type(t), span(c));
    }

    private TypeData adt(JsonCursor c) {
        c.onlyFields(Set.of("name", "kind", "typeParams", "constructors"), "an ADT definition");
        String name = c.field("name").text();
        JsonCursor kind = c.optField("kind");
        GlobalTypeVar header = new GlobalTypeVar(name, kind == null ? TypeKind.ADT_HANDLE : typeKind(kind));
        List<TypeVar> params = new ArrayList<>();
        for (JsonCursor p : c.optElements("typeParams")) params.add(typeVars.get(p.ref(typeVars.size(), "type variable")));
        List<Constructor> ctors = new ArrayList<>();
        Map<String, Constructor> byName = new HashMap<>();
        for (JsonCursor k : c.field("constructors").elements()) {
            k.onlyFields(Set.of("name", "tag", "inputs"), "a constructor");
            List<Type> inputs = new ArrayList<>();
            for (JsonCursor t : k.optElements("inputs")) inputs.add(type(t));
            Constructor ctor = new Constructor(k.field("name").text(), inputs, header, k.field("tag").intValue());
            if (byName.put(ctor.name(), ctor) != null) throw k.field("name").error("constructor " + ctor.name() + " is defined twice in type " + name);
            ctors.add(ctor);
        }
        constructors.put(name, byName);
        return new TypeData(header, params, ctors);
    }

    private Constructor constructorRef(JsonCursor c) {
        String adt = c.field("adt").text();
        String name = c.field("name").text();
        Map<String, Constructor> byName = constructors.get(adt);
        if (byName == null) throw c.field("adt").error("unknown type " + adt + " (not in $.adts)");
        Constructor ctor = byName.get(name);
        if (ctor == null) throw c.field("name").error("type " + adt + " has no constructor " + name);
        return ctor;
    }

    private Span span(JsonCursor owner) {
        JsonCursor s = owner.optField("span");
        if (s == null) return Span.NONE;
        List<JsonCursor> parts = s.elements();
        if (parts.size() != 3) throw s.error("expected [file, line, column], got " + parts.size() + " elements");
        String file = files.get(parts.get(0).ref(files.size(), "file"));
        return new Span(file, parts.get(1).nonNegativeInt(), parts.get(2).nonNegativeInt());
    }

    // ---- expressions ---------------------------------------------------------------------------

    /** A reference from node {@code self} to an earlier node (the table is in post-order). */
    private Expr child(JsonCursor c, int self) {
        if (!c.node.isIntegralNumber() || !c.node.canConvertToInt()) throw c.error("expected a node id (an integer), got " + JsonCursor.describe(c.node));
        int id = c.node.intValue();
        if (id < 0 || id >= self) {
            throw c.error("unknown node id " + id + (id >= self && id < nodes.length ? " (nodes may refer only to earlier nodes, here 0.." + (self - 1) + ")" : ""));
        }
        return nodes[id];
    }

    private List<Expr> children(JsonCursor owner, String field, int self) {
        List<Expr> out = new ArrayList<>();
        for (JsonCursor c : owner.field(field).elements()) out.add(child(c, self));
        return out;
    }

    private Var var(JsonCursor c) {
        return vars.get(c.ref(vars.size(), "var"));
    }

    private Expr node(JsonCursor c, int self) {
        c.object();
        String kind = c.field("node").text();
        Set<String> allowed = NODE_FIELDS.get(kind);
        if (allowed == null) throw c.field("node").error("unknown node kind '" + kind + "' (expected one of " + new java.util.TreeSet<>(NODE_FIELDS.keySet()) + ")");
        c.onlyFields(allowed, "a " + kind + " node");
        return switch (kind) {
            case "Var" -> var(c.field("var"));
            case "GlobalVar" -> new GlobalVar(c.field("name").text());
            case "Op" -> new Op(c.field("name").text());
            case "Constructor" -> constructorRef(c);
            case "Constant" -> new Constant(constant(c), span(c));
            case "Tuple" -> new Tuple(children(c, "fields", self), span(c));
            case "TupleGetItem" -> new TupleGetItem(child(c.field("tuple"), self), c.field("index").nonNegativeInt(), span(c));
            case "Let" -> new Let(var(c.field("var")), child(c.field("value"), self), child(c.field("body"), self), span(c));
            case "If" -> new If(child(c.field("cond"), self), child(c.field("then"), self), child(c.field("else"), self), span(c));
            case "Function" -> {
                List<TypeVar> tps = new ArrayList<>();
                for (JsonCursor p : c.optElements("typeParams")) tps.add(typeVars.get(p.ref(typeVars.size(), "type variable")));
                List<Var> params = new ArrayList<>();
                for (JsonCursor p : c.field("params").elements()) params.add(var(p));
                JsonCursor ret = c.optField("retType");
                yield new Function(params, child(c.field("body"), self), ret == null ? null : type(ret), tps, attrs(c), span(c));
            }
            case "Call" -> {
                List<Type> typeArgs = new ArrayList<>();
                for (JsonCursor t : c.optElements("typeArgs")) typeArgs.add(type(t));
                yield new Call(child(c.field("callee"), self), children(c, "args", self), attrs(c), typeArgs, span(c));
            }
            case "Match" -> {
                Expr data = child(c.field("data"), self);
                List<Clause> clauses = new ArrayList<>();
                for (JsonCursor cl : c.field("clauses").elements()) {
                    cl.onlyFields(Set.of("pattern", "body"), "a match clause");
                    clauses.add(new Clause(pattern(cl.field("pattern")), child(cl.field("body"), self)));
                }
                yield new Match(data, clauses, c.field("complete").bool(), span(c));
            }
            case "RefCreate" -> new RefCreate(child(c.field("value"), self), span(c));
            case "RefRead" -> new RefRead(child(c.field("ref"), self), span(c));
            case "RefWrite" -> new RefWrite(child(c.field("ref"), self), child(c.field("value"), self), span(c));
            default -> throw new IllegalStateException("NODE_FIELDS and this switch disagree on " + kind);
        };
    }

    private NDArray constant(JsonCursor c) {
        JsonCursor dt = c.field("dtype");
        DType dtype;
        try {
            dtype = DType.parse(dt.text());
        } catch (IllegalArgumentException e) {
            throw dt.error(e.getMessage());
        }
        List<JsonCursor> dims = c.field("shape").elements();
        int[] shape = new int[dims.size()];
        for (int i = 0; i < shape.length; i++) shape[i] = dims.get(i).nonNegativeInt();
        JsonCursor data = c.optField("data");
        JsonCursor blob = c.optField("blob");
        if ((data == null) == (blob == null)) throw c.error("a Constant needs exactly one of 'data' (inline) or 'blob' (a SHA-256 key)");
        try {
            if (data != null) {
                byte[] bytes;
                try {
                    bytes = Base64.getDecoder().decode(data.text());
                } catch (IllegalArgumentException e) {
                    throw data.error("not valid base64: " + e.getMessage());
                }
                try {
                    return NDArray.fromBytes(dtype, shape, bytes);
                } catch (IllegalArgumentException e) {
                    throw data.error(e.getMessage());
                }
            }
            String sha = blob.text();
            if (!Sha256.isKey(sha)) throw blob.error("not a SHA-256 blob key (64 lower-case hex digits): '" + sha + "'");
            byte[] bytes;
            try {
                bytes = blobs.get(sha);
                // Whatever the source promises, check: a wrong tensor is worse than a failed job.
                Sha256.verify(sha, bytes, "");
            } catch (BlobStoreException e) {
                throw blob.error(e.getMessage(), e);
            }
            try {
                return TensorBlob.decode(bytes, dtype, shape);
            } catch (IllegalArgumentException e) {
                throw blob.error(e.getMessage());
            }
        } catch (IllegalArgumentException e) {
            throw c.error(e.getMessage()); // e.g. a shape too large for one array
        }
    }

    private Pattern pattern(JsonCursor c) {
        c.object();
        String kind = c.field("pattern").text();
        Set<String> allowed = PATTERN_FIELDS.get(kind);
        if (allowed == null) throw c.field("pattern").error("unknown pattern kind '" + kind + "' (expected Wildcard, Bind, Ctor or Tuple)");
        c.onlyFields(allowed, "a " + kind + " pattern");
        return switch (kind) {
            case "Wildcard" -> Pattern.WILDCARD;
            case "Bind" -> new Pattern.Bind(var(c.field("var")));
            case "Ctor" -> {
                Constructor ctor = constructorRef(c);
                List<Pattern> args = new ArrayList<>();
                for (JsonCursor a : c.optElements("args")) args.add(pattern(a));
                yield new Pattern.Ctor(ctor, args);
            }
            case "Tuple" -> {
                List<Pattern> fields = new ArrayList<>();
                for (JsonCursor a : c.field("fields").elements()) fields.add(pattern(a));
                yield new Pattern.TuplePattern(fields);
            }
            default -> throw new IllegalStateException("PATTERN_FIELDS and this switch disagree on " + kind);
        };
    }

    // ---- types, dims, attributes ---------------------------------------------------------------

    private static TypeKind typeKind(JsonCursor c) {
        String s = c.text();
        try {
            return TypeKind.valueOf(s);
        } catch (IllegalArgumentException e) {
            throw c.error("unknown type kind '" + s + "' (expected one of " + java.util.Arrays.toString(TypeKind.values()) + ")");
        }
    }

    private List<Type> types(JsonCursor owner, String field) {
        List<Type> out = new ArrayList<>();
        for (JsonCursor t : owner.field(field).elements()) out.add(type(t));
        return out;
    }

    private Type type(JsonCursor c) {
        c.object();
        String kind = c.field("type").text();
        Set<String> allowed = TYPE_FIELDS.get(kind);
        if (allowed == null) throw c.field("type").error("unknown type kind '" + kind + "' (expected one of " + new java.util.TreeSet<>(TYPE_FIELDS.keySet()) + ")");
        c.onlyFields(allowed, "a " + kind + " type");
        return switch (kind) {
            case "Tensor" -> {
                List<Dim> shape = new ArrayList<>();
                for (JsonCursor d : c.field("shape").elements()) shape.add(dim(d));
                JsonCursor dt = c.field("dtype");
                try {
                    yield new TensorType(shape, DType.parse(dt.text()));
                } catch (IllegalArgumentException e) {
                    throw dt.error(e.getMessage());
                }
            }
            case "Tuple" -> new TupleType(types(c, "fields"));
            case "Func" -> {
                List<TypeVar> tps = new ArrayList<>();
                for (JsonCursor p : c.optElements("typeParams")) tps.add(typeVars.get(p.ref(typeVars.size(), "type variable")));
                List<TypeRelation> rels = new ArrayList<>();
                for (JsonCursor r : c.optElements("constraints")) {
                    r.onlyFields(Set.of("relation", "args", "numInputs", "attrs"), "a type relation");
                    rels.add(new TypeRelation(r.field("relation").text(), types(r, "args"), r.field("numInputs").nonNegativeInt(), attrs(r)));
                }
                yield new FuncType(tps, types(c, "args"), type(c.field("ret")), rels);
            }
            case "TypeVar" -> typeVars.get(c.field("ref").ref(typeVars.size(), "type variable"));
            case "GlobalTypeVar" -> {
                JsonCursor k = c.optField("kind");
                yield new GlobalTypeVar(c.field("name").text(), k == null ? TypeKind.ADT_HANDLE : typeKind(k));
            }
            case "TypeCall" -> new TypeCall(type(c.field("func")), types(c, "args"));
            case "Ref" -> new RefType(type(c.field("value")));
            case "Incomplete" -> {
                IncompleteType written = new IncompleteType(typeKind(c.field("kind")), c.field("id").longValue());
                yield holes.computeIfAbsent(written, w -> {
                    IncompleteType fresh = IncompleteType.fresh();
                    return new IncompleteType(w.kind(), fresh.id());
                });
            }
            default -> throw new IllegalStateException("TYPE_FIELDS and this switch disagree on " + kind);
        };
    }

    private Dim dim(JsonCursor c) {
        if (c.node.isIntegralNumber()) return new Dim.Int(c.longValue());
        if (c.node.isTextual()) {
            if (c.text().equals("?")) return Dim.ANY;
            throw c.error("expected a dimension (an integer, \"?\", {\"sym\": ...} or {\"op\": ...}), got " + JsonCursor.describe(c.node));
        }
        if (!c.node.isObject()) throw c.error("expected a dimension (an integer, \"?\", {\"sym\": ...} or {\"op\": ...}), got " + JsonCursor.describe(c.node));
        if (c.has("sym")) {
            c.onlyFields(Set.of("sym"), "a symbolic dimension");
            return new Dim.Sym(c.field("sym").text());
        }
        c.onlyFields(Set.of("op", "lhs", "rhs"), "a dimension expression");
        JsonCursor op = c.field("op");
        Dim.BinOp binOp;
        try {
            binOp = Dim.BinOp.valueOf(op.text().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw op.error("unknown dimension operator '" + op.text() + "' (expected add, sub, mul, floor_div or floor_mod)");
        }
        return new Dim.Bin(binOp, dim(c.field("lhs")), dim(c.field("rhs")));
    }

    private Attrs attrs(JsonCursor owner) {
        JsonCursor a = owner.optField("attrs");
        if (a == null) return Attrs.EMPTY;
        LinkedHashMap<String, AttrValue> m = new LinkedHashMap<>();
        for (Map.Entry<String, JsonCursor> e : a.fields()) m.put(e.getKey(), attrValue(e.getValue()));
        return new Attrs(m);
    }

    private AttrValue attrValue(JsonCursor c) {
        var n = c.node;
        if (n.isNull()) return AttrValue.NONE;
        if (n.isBoolean()) return new AttrValue.BoolValue(n.booleanValue());
        if (n.isTextual()) return new AttrValue.StringValue(n.textValue());
        if (n.isIntegralNumber()) return new AttrValue.IntValue(c.longValue());
        if (n.isArray()) {
            List<AttrValue> vs = new ArrayList<>();
            for (JsonCursor e : c.elements()) vs.add(attrValue(e));
            return new AttrValue.ListValue(vs);
        }
        if (n.isObject() && n.size() == 1 && n.has("float")) {
            JsonCursor f = c.field("float");
            if (f.node.isNumber()) return new AttrValue.FloatValue(f.node.doubleValue());
            if (f.node.isTextual()) {
                switch (f.node.textValue()) {
                    case "NaN" -> { return new AttrValue.FloatValue(Double.NaN); }
                    case "Infinity" -> { return new AttrValue.FloatValue(Double.POSITIVE_INFINITY); }
                    case "-Infinity" -> { return new AttrValue.FloatValue(Double.NEGATIVE_INFINITY); }
                    default -> { }
                }
            }
            throw f.error("expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got " + JsonCursor.describe(f.node));
        }
        throw c.error("expected an attribute value (integer, {\"float\": ...}, string, boolean, null or a list), got " + JsonCursor.describe(n));
    }
}
