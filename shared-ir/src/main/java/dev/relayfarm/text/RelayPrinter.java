package dev.relayfarm.text;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
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
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Prints Relay IR in TVM's text format, version 0.0.5, so that
 * {@code RelayParser.parseModule(RelayPrinter.print(m))} is structurally equal to {@code m}.
 *
 * <pre>
 * #[version = "0.0.5"]
 * def @main(%x: Tensor[(1, 3), float32]) {
 *   %0 = add(%x, 1f);
 *   let %y = multiply(%0, %0);
 *   nn.relu(%y)
 * }
 * </pre>
 *
 * <p>Public API: {@link #print(IRModule)}, {@link #print(Expr)}, and the overloads taking
 * {@link Options} (e.g. {@code Options.withTypes(typeTable::get)} to add {@code /* ty=... *}{@code /}
 * comments after bindings).
 *
 * <p>Layout rules (as TVM's printer):
 * <ul>
 *   <li>Inside a block (a function body, an if branch, a match arm), every non-atomic node that is
 *       an operand of another node gets a graph binding {@code %N = ...;} the first time it is
 *       needed, and is {@code %N} from then on, so shared nodes print once. Only a block's result
 *       and a let's value are written in place (when used once).
 *   <li>Atomic nodes print in place: variables, globals, operators, constructors, {@code ()} and
 *       constants. Scalar constants are literals with TVM's dtype suffixes ({@code 1f}, {@code 2i64},
 *       {@code True}); other constants become {@code meta[relay.Constant][i]}, with the tensors in a
 *       trailing metadata section (format: {@link Metadata}).
 *   <li>Variables print with their name hints; distinct variables that share a hint within one
 *       definition get suffixes ({@code %x}, {@code %x1}), so shadowing never changes meaning.
 *       Numeric hints get a {@code v} prefix because {@code %0} names graph bindings.
 *   <li>Binary operators print as calls ({@code add(%a, %b)}), never infix.
 *   <li>Not representable in the text (as in TVM): {@link Call#typeArgs()}, type-relation
 *       constraints of function types, and kinds of type parameters.
 * </ul>
 *
 * <p>Long let chains are printed by a loop and dataflow graphs by an explicit post-order stack, so
 * 100,000-node programs print without a deep Java stack; only syntactic nesting (functions, ifs,
 * matches inside each other) recurses.
 */
public final class RelayPrinter {
    private static final String INDENT = "  ";

    /**
     * Printer settings. {@code typeOf} (may be null) gives the inferred type of an expression, or null
     * when unknown; when set, bindings and block results get a {@code /* ty=T *}{@code /} comment.
     */
    public record Options(java.util.function.Function<Expr, Type> typeOf) {
        public static final Options DEFAULT = new Options(null);

        public static Options withTypes(java.util.function.Function<Expr, Type> typeOf) {
            return new Options(typeOf);
        }

        /** Type comments from a table keyed by node identity (e.g. an {@code IdentityHashMap}). */
        public static Options withTypes(Map<Expr, Type> types) {
            return new Options(types::get);
        }
    }

    private final Options options;
    private final List<NDArray> meta = new ArrayList<>();
    private final IdentityHashMap<Constant, Integer> metaIndex = new IdentityHashMap<>();

    // Per top-level definition.
    private IdentityHashMap<Expr, Integer> uses;
    private IdentityHashMap<Expr, String> docs;
    private IdentityHashMap<Var, String> varNames;
    private Set<String> usedNames;
    private int graphCounter;

    private RelayPrinter(Options options) {
        this.options = options == null ? Options.DEFAULT : options;
    }

    public static String print(IRModule module) {
        return print(module, Options.DEFAULT);
    }

    public static String print(IRModule module, Options options) {
        return new RelayPrinter(options).module(module);
    }

    /** Prints one expression (with the version header, and metadata when needed). */
    public static String print(Expr expr) {
        return print(expr, Options.DEFAULT);
    }

    public static String print(Expr expr, Options options) {
        return new RelayPrinter(options).expression(expr);
    }

    /** Prints a type as the text format writes it ({@link TypeFormat}). */
    public static String print(Type type) {
        return TypeFormat.format(type);
    }

    private String header() {
        return "#[version = \"" + RelayParser.VERSION + "\"]\n";
    }

    private String module(IRModule m) {
        StringBuilder sb = new StringBuilder(header());
        for (TypeData td : m.types().values()) {
            sb.append("type ").append(td.name());
            typeParams(sb, td.typeParams());
            sb.append(" {\n");
            for (Constructor c : td.constructors()) {
                sb.append(INDENT).append(c.name());
                if (!c.inputs().isEmpty()) {
                    sb.append('(');
                    for (int i = 0; i < c.inputs().size(); i++) {
                        if (i > 0) sb.append(", ");
                        TypeFormat.append(sb, c.inputs().get(i));
                    }
                    sb.append(')');
                }
                sb.append(",\n");
            }
            sb.append("}\n\n");
        }
        for (Map.Entry<GlobalVar, Function> e : m.functions().entrySet()) {
            Function f = e.getValue();
            startDefinition(f);
            sb.append("def @").append(e.getKey().name());
            signature(sb, f);
            sb.append(" {\n");
            block(f.body(), INDENT, sb);
            sb.append("}\n\n");
        }
        sb.setLength(sb.length() - 1); // one newline at the end, not a blank line
        appendMetadata(sb);
        return sb.toString();
    }

    private String expression(Expr e) {
        StringBuilder sb = new StringBuilder(header());
        startDefinition(e);
        block(e, "", sb);
        appendMetadata(sb);
        return sb.toString();
    }

    private void appendMetadata(StringBuilder sb) {
        if (!meta.isEmpty()) sb.append('\n').append(Metadata.format(meta));
    }

    private void startDefinition(Expr root) {
        uses = new IdentityHashMap<>();
        for (Expr n : ExprTraversal.postOrder(root)) {
            for (Expr c : n.children()) uses.merge(c, 1, Integer::sum);
        }
        docs = new IdentityHashMap<>();
        varNames = new IdentityHashMap<>();
        usedNames = new HashSet<>();
        graphCounter = 0;
    }

    // ------------------------------------------------------------------ names

    /** The printed name of {@code v}, allocating a unique one on first sight. */
    private String varName(Var v) {
        String n = varNames.get(v);
        if (n != null) return n;
        StringBuilder base = new StringBuilder();
        for (char c : v.name().toCharArray()) base.append(Character.isLetterOrDigit(c) || c == '_' ? c : '_');
        if (base.isEmpty()) base.append('x');
        if (base.chars().allMatch(Character::isDigit)) base.insert(0, 'v');
        String candidate = base.toString();
        for (int i = 1; usedNames.contains(candidate); i++) candidate = base + Integer.toString(i);
        usedNames.add(candidate);
        varNames.put(v, candidate);
        return candidate;
    }

    private void varDecl(StringBuilder sb, Var v) {
        sb.append('%').append(varName(v));
        if (v.annotation() != null) {
            sb.append(": ");
            TypeFormat.append(sb, v.annotation());
        }
    }

    private static void typeParams(StringBuilder sb, List<TypeVar> tps) {
        if (tps.isEmpty()) return;
        sb.append('[');
        for (int i = 0; i < tps.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(tps.get(i).name());
        }
        sb.append(']');
    }

    /** {@code [A](%x: T, attr=v) -> R}. */
    private void signature(StringBuilder sb, Function f) {
        typeParams(sb, f.typeParams());
        sb.append('(');
        boolean first = true;
        for (Var p : f.params()) {
            if (!first) sb.append(", ");
            first = false;
            varDecl(sb, p);
        }
        for (Map.Entry<String, AttrValue> a : f.attrs().values().entrySet()) {
            if (!first) sb.append(", ");
            first = false;
            sb.append(a.getKey()).append('=');
            attrValue(sb, a.getValue());
        }
        sb.append(')');
        if (f.retType() != null) {
            sb.append(" -> ");
            TypeFormat.append(sb, f.retType());
        }
    }

    // ------------------------------------------------------------------ blocks

    private String typeComment(Expr e) {
        if (options.typeOf() == null) return "";
        Type t = options.typeOf().apply(e);
        return t == null ? "" : " /* ty=" + TypeFormat.format(t) + " */";
    }

    private boolean inlinable(Expr e) {
        return !docs.containsKey(e) && uses.getOrDefault(e, 0) <= 1;
    }

    /** Statements and result of a block, one per line at indentation {@code ind}. */
    private void block(Expr e, String ind, StringBuilder sb) {
        Expr cur = e;
        while (cur instanceof Let l && inlinable(l)) {
            letLine(l, ind, sb);
            cur = l.body();
        }
        String tail = root(cur, ind, sb);
        sb.append(ind).append(tail).append(typeComment(cur)).append('\n');
    }

    private void letLine(Let l, String ind, StringBuilder sb) {
        StringBuilder decl = new StringBuilder();
        varDecl(decl, l.var()); // before the value: a recursive function refers to itself
        String value = root(l.value(), ind, sb);
        sb.append(ind).append("let ").append(decl).append(" = ").append(value).append(';').append(typeComment(l.value())).append('\n');
    }

    /** Text for a node written in place (a block result or let value): bound instead when shared. */
    private String root(Expr e, String ind, StringBuilder sb) {
        if (atomic(e)) return atom(e);
        String d = docs.get(e);
        if (d != null) return d;
        return visit(e, uses.getOrDefault(e, 0) > 1, ind, sb);
    }

    private static boolean atomic(Expr e) {
        return switch (e) {
            case Var v -> true;
            case GlobalVar g -> true;
            case Op o -> true;
            case Constructor c -> true;
            case Constant c -> true;
            case Tuple t -> t.fields().isEmpty();
            case TupleGetItem t -> false;
            case Let l -> false;
            case If i -> false;
            case Function f -> false;
            case Call c -> false;
            case Match m -> false;
            case RefCreate r -> false;
            case RefRead r -> false;
            case RefWrite r -> false;
        };
    }

    /** The operands that must be printed (bound) before a node's own text. */
    private static List<Expr> operands(Expr e) {
        return switch (e) {
            case Call c -> e.children();
            case Tuple t -> t.fields();
            case TupleGetItem t -> List.of(t.tuple());
            case If i -> List.of(i.cond());
            case Match m -> List.of(m.data());
            case RefCreate r -> List.of(r.value());
            case RefRead r -> List.of(r.ref());
            case RefWrite r -> List.of(r.ref(), r.value());
            // Bodies are printed as nested blocks, not as operands.
            case Function f -> List.of();
            case Let l -> List.of();
            case Var v -> List.of();
            case GlobalVar g -> List.of();
            case Op o -> List.of();
            case Constructor c -> List.of();
            case Constant c -> List.of();
        };
    }

    private boolean done(Expr e) {
        return atomic(e) || docs.containsKey(e);
    }

    private String doc(Expr e) {
        return atomic(e) ? atom(e) : docs.get(e);
    }

    private record Frame(Expr node, List<Expr> operands, int[] next) {}

    /**
     * Post-order over operands with an explicit stack: every operand not yet printed gets a graph
     * binding line. The root is bound too when {@code bindRoot}; otherwise its text is returned.
     */
    private String visit(Expr root, boolean bindRoot, String ind, StringBuilder sb) {
        ArrayDeque<Frame> stack = new ArrayDeque<>();
        stack.push(new Frame(root, operands(root), new int[] {0}));
        while (true) {
            Frame top = stack.peek();
            if (top.next[0] < top.operands.size()) {
                Expr c = top.operands.get(top.next[0]++);
                if (!done(c)) stack.push(new Frame(c, operands(c), new int[] {0}));
                continue;
            }
            stack.pop();
            String text = build(top.node, ind);
            if (top.node == root && !bindRoot) return text;
            String name = "%" + graphCounter++;
            sb.append(ind).append(name).append(" = ").append(text).append(';').append(typeComment(top.node)).append('\n');
            docs.put(top.node, name);
            if (top.node == root) return name;
        }
    }

    private String atom(Expr e) {
        return switch (e) {
            case Var v -> "%" + varName(v);
            case GlobalVar g -> "@" + g.name();
            case Op o -> o.name();
            case Constructor c -> c.name();
            case Constant c -> {
                String lit = Literals.format(c.data());
                if (lit != null) yield lit;
                Integer i = metaIndex.get(c);
                if (i == null) {
                    i = meta.size();
                    meta.add(c.data());
                    metaIndex.put(c, i);
                }
                yield "meta[" + Metadata.CONSTANTS + "][" + i + "]";
            }
            case Tuple t -> "()";
            default -> throw new IllegalStateException("not atomic: " + e);
        };
    }

    /** The text of a non-atomic node whose operands are all printed already. */
    private String build(Expr e, String ind) {
        StringBuilder sb = new StringBuilder();
        String inner = ind + INDENT;
        switch (e) {
            case Call c -> {
                sb.append(doc(c.callee())).append('(');
                boolean first = true;
                for (Expr a : c.args()) {
                    if (!first) sb.append(", ");
                    first = false;
                    sb.append(doc(a));
                }
                for (Map.Entry<String, AttrValue> a : c.attrs().values().entrySet()) {
                    if (!first) sb.append(", ");
                    first = false;
                    sb.append(a.getKey()).append('=');
                    attrValue(sb, a.getValue());
                }
                sb.append(')');
            }
            case Tuple t -> {
                sb.append('(');
                for (int i = 0; i < t.fields().size(); i++) {
                    if (i > 0) sb.append(", ");
                    sb.append(doc(t.fields().get(i)));
                }
                if (t.fields().size() == 1) sb.append(',');
                sb.append(')');
            }
            case TupleGetItem t -> {
                // A literal operand is parenthesized: "0.2" would lex as a float, "(0).2" is a projection.
                boolean literal = t.tuple() instanceof Constant;
                sb.append(literal ? "(" : "").append(doc(t.tuple())).append(literal ? ")" : "").append('.').append(t.index());
            }
            case If i -> {
                sb.append("if (").append(doc(i.cond())).append(") {\n");
                block(i.thenBranch(), inner, sb);
                Expr rest = i.elseBranch();
                // else-if chains: an else branch that is an if used only here, whose condition needs
                // no bindings, prints as "else if" (in a loop, so long chains do not recurse).
                while (rest instanceof If ei && inlinable(ei) && done(ei.cond())) {
                    sb.append(ind).append("} else if (").append(doc(ei.cond())).append(") {\n");
                    block(ei.thenBranch(), inner, sb);
                    rest = ei.elseBranch();
                }
                sb.append(ind).append("} else {\n");
                block(rest, inner, sb);
                sb.append(ind).append('}');
            }
            case Match m -> {
                sb.append(m.complete() ? "match (" : "match? (").append(doc(m.data())).append(") {\n");
                for (Clause cl : m.clauses()) {
                    sb.append(inner);
                    pattern(sb, cl.pattern());
                    StringBuilder body = new StringBuilder();
                    block(cl.body(), inner + INDENT, body);
                    if (body.indexOf("\n") == body.length() - 1) {
                        // A one-line body with no bindings needs no braces: "Nil => %acc,".
                        sb.append(" => ").append(body.toString().strip()).append(",\n");
                    } else {
                        sb.append(" => {\n").append(body).append(inner).append("},\n");
                    }
                }
                sb.append(ind).append('}');
            }
            case Function f -> {
                sb.append("fn ");
                signature(sb, f);
                sb.append(" {\n");
                block(f.body(), inner, sb);
                sb.append(ind).append('}');
            }
            case Let l -> {
                // A let chain in operand position: a parenthesised block.
                sb.append("(\n");
                letLine(l, inner, sb);
                block(l.body(), inner, sb);
                sb.append(ind).append(')');
            }
            case RefCreate r -> sb.append("ref(").append(doc(r.value())).append(')');
            case RefRead r -> sb.append("ref_read(").append(doc(r.ref())).append(')');
            case RefWrite r -> sb.append("ref_write(").append(doc(r.ref())).append(", ").append(doc(r.value())).append(')');
            case Var v -> throw new IllegalStateException("atomic");
            case GlobalVar g -> throw new IllegalStateException("atomic");
            case Op o -> throw new IllegalStateException("atomic");
            case Constructor c -> throw new IllegalStateException("atomic");
            case Constant c -> throw new IllegalStateException("atomic");
        }
        return sb.toString();
    }

    private void pattern(StringBuilder sb, Pattern p) {
        switch (p) {
            case Pattern.Wildcard w -> sb.append('_');
            case Pattern.Bind b -> varDecl(sb, b.var());
            case Pattern.Ctor c -> {
                sb.append(c.constructor().name());
                if (!c.args().isEmpty()) {
                    sb.append('(');
                    for (int i = 0; i < c.args().size(); i++) {
                        if (i > 0) sb.append(", ");
                        pattern(sb, c.args().get(i));
                    }
                    sb.append(')');
                }
            }
            case Pattern.TuplePattern t -> {
                sb.append('(');
                for (int i = 0; i < t.fields().size(); i++) {
                    if (i > 0) sb.append(", ");
                    pattern(sb, t.fields().get(i));
                }
                if (t.fields().size() == 1) sb.append(',');
                sb.append(')');
            }
        }
    }

    // ------------------------------------------------------------------ attributes

    static void attrValue(StringBuilder sb, AttrValue v) {
        switch (v) {
            case AttrValue.IntValue i -> sb.append(i.value());
            case AttrValue.FloatValue f -> sb.append(Literals.formatAttrFloat(f.value()));
            case AttrValue.StringValue s -> quote(sb, s.value());
            case AttrValue.BoolValue b -> sb.append(b.value() ? "True" : "False");
            case AttrValue.NoneValue n -> sb.append("None");
            case AttrValue.ListValue l -> {
                sb.append('[');
                for (int i = 0; i < l.values().size(); i++) {
                    if (i > 0) sb.append(", ");
                    attrValue(sb, l.values().get(i));
                }
                sb.append(']');
            }
        }
    }

    /** Prints attributes as {@code k=v, ...} (for diagnostics and tools). */
    public static String print(Attrs attrs) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, AttrValue> a : attrs.values().entrySet()) {
            if (!sb.isEmpty()) sb.append(", ");
            sb.append(a.getKey()).append('=');
            attrValue(sb, a.getValue());
        }
        return sb.toString();
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                default -> sb.append(c);
            }
        }
        sb.append('"');
    }
}
