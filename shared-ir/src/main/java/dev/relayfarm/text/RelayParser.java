package dev.relayfarm.text;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
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
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parser for the Relay text format, TVM's version 0.0.5 dialect (what {@link RelayPrinter} writes).
 *
 * <pre>
 * #[version = "0.0.5"]
 * type List[A] { Cons(A, List[A]), Nil }
 * def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32]) -&gt; Tensor[(1, 4), float32] {
 *   %0 = nn.dense(%x, %w, units=4);   // graph binding: names a node, no Let
 *   let %y = %0 * 2f;                 // let binding
 *   nn.relu(%y)
 * }
 * </pre>
 *
 * <p>Public API:
 * <ul>
 *   <li>{@link #parseModule(String, String)}: a whole module ({@code def}s and {@code type}s);
 *   <li>{@link #parseExpr(String, String)}: one expression, possibly preceded by bindings;
 *   <li>{@link #parseExpr(String, String, IRModule, Map)}: an expression that may use the globals,
 *       ADTs and constructors of a module and the given free variables.
 * </ul>
 * Errors throw {@link RelayParseException} ({@code file:line:col: message} plus a caret line).
 *
 * <p>Semantics worth knowing:
 * <ul>
 *   <li>{@code %n = e;} (a graph binding) names the node {@code e}; each later {@code %n} is that
 *       same object, so the result is a DAG. Graph names are visible until the end of the enclosing
 *       top-level definition (not just their block), as in TVM, where a printer may define a shared
 *       node inside one branch and use it after.
 *   <li>{@code let %x = v; body}: {@code %x} is in scope in {@code body}; it is in scope inside
 *       {@code v} too only when {@code v} is a function literal (recursive local functions), so
 *       {@code let %x = %x + 1;} refers to the outer {@code %x}.
 *   <li>Infix operators become operator calls with C precedence: {@code * /} over {@code + -} over
 *       {@code < <= > >=} over {@code == !=}; unary {@code -e} is {@code negative(e)}, but a minus
 *       directly before a number is part of the literal ({@code -1f} is a constant).
 *   <li>An unqualified lower-case callee ({@code add}, {@code nn.conv2d}) is an {@link Op}; operator
 *       names are not checked here (type inference does that). Capitalised names must be
 *       constructors of a known ADT.
 *   <li>Bare integer literals are int32, bare fractional ones float32 (TVM's rule).
 * </ul>
 *
 * <p>Deep programs: sequences of bindings are parsed in a loop and nested inside-out, and infix
 * chains with an explicit operator stack, so 100,000 bindings need no deep Java stack. Only genuine
 * syntactic nesting (parentheses, blocks, else-if chains aside) recurses, and it is bounded by
 * {@link ParserOptions#maxDepth()}: deeper text is a located error, not a StackOverflowError.
 */
public final class RelayParser {
    public static final String VERSION = "0.0.5";
    private static final String DEFAULT_FILE = "<string>";

    private final String file;
    private final SourceLines lines;
    private final List<Token> toks;
    private int pos;
    private final List<NDArray> metaData;
    private final int metaLine;
    private final Map<Integer, Constant> metaConstants = new HashMap<>();

    /** ADT names known to the module (pre-scanned so definitions may come in any order). */
    private final Map<String, GlobalTypeVar> adts = new LinkedHashMap<>();
    private final Map<String, Constructor> constructors = new HashMap<>();
    /** Global function names; null means "any @name is accepted" (expression without a module). */
    private Set<String> globals;
    private final Map<String, Var> freeVars;

    // Scoped names with an undo log, so leaving a scope is O(bindings made in it).
    private final HashMap<String, Var> locals = new HashMap<>();
    private final ArrayList<String> undoNames = new ArrayList<>();
    private final ArrayList<Var> undoVars = new ArrayList<>();
    private final HashMap<String, TypeVar> typeVars = new HashMap<>();
    private final ArrayList<String> typeUndoNames = new ArrayList<>();
    private final ArrayList<TypeVar> typeUndoVars = new ArrayList<>();
    /** Graph bindings ({@code %0 = ...}) of the current top-level definition. */
    private final HashMap<String, Expr> graph = new HashMap<>();
    private final int maxDepth;
    /** Current syntactic nesting (see {@link ParserOptions}); each recursive production counts one. */
    private int depth;

    private RelayParser(String source, String file, Map<String, Var> freeVars, ParserOptions options) {
        this.file = file;
        this.maxDepth = options.maxDepth();
        this.lines = new SourceLines(source);
        Lexer lexer = new Lexer(source, file, lines).run();
        this.toks = lexer.tokens();
        this.metaLine = lexer.metadataLine();
        this.freeVars = freeVars == null ? Map.of() : freeVars;
        if (lexer.metadata() != null) {
            try {
                this.metaData = Metadata.parse(lexer.metadata());
            } catch (IllegalArgumentException e) {
                throw new RelayParseException(file, metaLine, 1, e.getMessage(), lines.line(metaLine));
            }
        } else {
            this.metaData = null;
        }
    }

    // ------------------------------------------------------------------ public API

    /** Parses a module: optional {@code #[version = "0.0.5"]}, then {@code def}s and {@code type}s, then optional metadata. */
    public static IRModule parseModule(String source, String fileName) {
        return parseModule(source, fileName, ParserOptions.DEFAULT);
    }

    /** {@link #parseModule(String, String)} with explicit options (e.g. another nesting limit). */
    public static IRModule parseModule(String source, String fileName, ParserOptions options) {
        RelayParser p = new RelayParser(source, fileName, null, options);
        return p.onOwnStack(p::module);
    }

    /** {@link #parseModule(String, String)} with the file name {@code <string>}. */
    public static IRModule parseModule(String source) {
        return parseModule(source, DEFAULT_FILE);
    }

    /** Parses one closed expression (bindings allowed before it); any {@code @global} is accepted. */
    public static Expr parseExpr(String source, String fileName) {
        return parseExpr(source, fileName, null, null);
    }

    /** {@link #parseExpr(String, String)} with the file name {@code <string>}. */
    public static Expr parseExpr(String source) {
        return parseExpr(source, DEFAULT_FILE);
    }

    /**
     * Parses one expression in the context of {@code module} (its ADTs, constructors and global
     * functions; null for none, which accepts any {@code @global}), where {@code %name} not bound in
     * the text resolves to {@code freeVars.get(name)} (null for none).
     */
    public static Expr parseExpr(String source, String fileName, IRModule module, Map<String, Var> freeVars) {
        return parseExpr(source, fileName, module, freeVars, ParserOptions.DEFAULT);
    }

    /** {@link #parseExpr(String, String, IRModule, Map)} with explicit options. */
    public static Expr parseExpr(String source, String fileName, IRModule module, Map<String, Var> freeVars, ParserOptions options) {
        RelayParser p = new RelayParser(source, fileName, freeVars, options);
        if (module != null) {
            p.globals = new HashSet<>();
            module.functions().keySet().forEach(g -> p.globals.add(g.name()));
            for (TypeData td : module.types().values()) {
                p.adts.put(td.name(), td.header());
                for (Constructor c : td.constructors()) p.constructors.put(c.name(), c);
            }
        }
        return p.onOwnStack(() -> {
            p.versionHeader();
            Expr e = p.expr();
            p.end();
            return e;
        });
    }

    /**
     * Inputs with fewer tokens than this cannot nest deeply enough to matter and are parsed on the
     * caller's thread (nearly every parse in tests and passes is a snippet).
     */
    private static final int OWN_STACK_ABOVE_TOKENS = 512;

    /**
     * Runs {@code parse} on a thread of its own with a stack sized for {@link #maxDepth} levels when
     * the input is large. The parser takes seven to nine Java frames per level, and their size varies
     * threefold with the JIT's state (measured on a 512 KiB stack: nested {@code if} overflowed at
     * 227 levels cold, 1,009 warm, and below 128 in the middle of the test suite), so the caller's
     * stack cannot be trusted with even the default limit; the consumers downstream take fewer and
     * smaller frames per level. The lexer and every check run unchanged; only the stack differs.
     */
    private <T> T onOwnStack(java.util.function.Supplier<T> parse) {
        if (toks.size() <= OWN_STACK_ABOVE_TOKENS) return parse.get();
        // 16 KiB per level is five times the worst measured; the stack is reserved, not committed.
        long stack = Math.max(8L << 20, (long) maxDepth * (16 << 10));
        java.util.concurrent.atomic.AtomicReference<T> result = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                result.set(parse.get());
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "relay-parser", stack);
        t.setDaemon(true);
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            t.interrupt();
            Thread.currentThread().interrupt();
            throw new java.util.concurrent.CancellationException("interrupted while parsing " + file);
        }
        switch (failure.get()) {
            case null -> {
                return result.get();
            }
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new IllegalStateException(failure.get());
        }
    }

    // ------------------------------------------------------------------ tokens and errors

    private Token peek() {
        return toks.get(pos);
    }

    private Token peek(int ahead) {
        return toks.get(Math.min(pos + ahead, toks.size() - 1));
    }

    private Token next() {
        Token t = toks.get(pos);
        if (t.kind() != TokenKind.EOF) pos++;
        return t;
    }

    private boolean at(TokenKind k) {
        return peek().kind() == k;
    }

    private boolean atIdent(String word) {
        return peek().isIdent(word);
    }

    private boolean accept(TokenKind k) {
        if (at(k)) {
            pos++;
            return true;
        }
        return false;
    }

    private Token expect(TokenKind k, String what) {
        if (!at(k)) throw error(peek(), "expected " + what + ", found " + peek().describe());
        return next();
    }

    private void expectIdent(String word) {
        if (!atIdent(word)) throw error(peek(), "expected '" + word + "', found " + peek().describe());
        next();
    }

    RelayParseException error(Token at, String message) {
        return new RelayParseException(file, at.line(), at.col(), message, lines.line(at.line()));
    }

    /**
     * Enters one level of syntactic nesting at {@code at}; past the limit, a located error instead of
     * a StackOverflowError here or in a recursive consumer downstream. Paired with {@link #leave()};
     * an error abandons the parse, so no finally is needed.
     */
    private void enter(Token at) {
        if (++depth > maxDepth) {
            throw error(at, "nesting deeper than " + maxDepth + " levels (the limit: write deep dataflow as let bindings, which are not nesting)");
        }
    }

    private void leave() {
        depth--;
    }

    private Span span(Token t) {
        return new Span(file, t.line(), t.col());
    }

    private void end() {
        accept(TokenKind.METADATA);
        if (!at(TokenKind.EOF)) throw error(peek(), "unexpected " + peek().describe() + " after the end of the program");
    }

    // ------------------------------------------------------------------ scopes

    private int mark() {
        return undoNames.size();
    }

    private void bindLocal(Var v) {
        undoNames.add(v.name());
        undoVars.add(locals.put(v.name(), v));
    }

    private void restore(int mark) {
        for (int i = undoNames.size() - 1; i >= mark; i--) {
            String name = undoNames.remove(i);
            Var prev = undoVars.remove(i);
            if (prev == null) locals.remove(name);
            else locals.put(name, prev);
        }
    }

    private int typeMark() {
        return typeUndoNames.size();
    }

    private void bindTypeVar(TypeVar v) {
        typeUndoNames.add(v.name());
        typeUndoVars.add(typeVars.put(v.name(), v));
    }

    private void restoreTypes(int mark) {
        for (int i = typeUndoNames.size() - 1; i >= mark; i--) {
            String name = typeUndoNames.remove(i);
            TypeVar prev = typeUndoVars.remove(i);
            if (prev == null) typeVars.remove(name);
            else typeVars.put(name, prev);
        }
    }

    // ------------------------------------------------------------------ module

    private void versionHeader() {
        if (at(TokenKind.HASH) && peek(1).is(TokenKind.LBRACKET) && peek(2).isIdent("version")) {
            next();
            next();
            next();
            expect(TokenKind.EQ, "'='");
            Token v = expect(TokenKind.STRING, "a version string");
            if (!v.text().equals(VERSION)) throw error(v, "unsupported Relay text version \"" + v.text() + "\" (expected \"" + VERSION + "\")");
            expect(TokenKind.RBRACKET, "']'");
        }
    }

    private IRModule module() {
        versionHeader();
        int start = pos;
        // Pass 1: names of all globals and ADTs, so uses may precede definitions.
        globals = new HashSet<>();
        List<Integer> typeDefs = new ArrayList<>();
        int depth = 0;
        for (int i = start; i < toks.size(); i++) {
            Token t = toks.get(i);
            switch (t.kind()) {
                case LPAREN, LBRACKET, LBRACE -> depth++;
                case RPAREN, RBRACKET, RBRACE -> depth--;
                default -> {}
            }
            if (depth != 0) continue;
            if (t.isIdent("def") && toks.get(i + 1).is(TokenKind.GLOBAL)) {
                Token g = toks.get(i + 1);
                if (!globals.add(g.text())) throw error(g, "duplicate definition of @" + g.text());
            } else if (t.isIdent("type") && toks.get(i + 1).is(TokenKind.IDENT)) {
                Token n = toks.get(i + 1);
                if (adts.containsKey(n.text())) throw error(n, "duplicate definition of type " + n.text());
                adts.put(n.text(), new GlobalTypeVar(n.text()));
                typeDefs.add(i);
            }
        }
        // Pass 2: ADT definitions, so their constructors are known to every function body.
        List<TypeData> types = new ArrayList<>();
        Map<Integer, Integer> typeDefEnds = new HashMap<>();
        for (int i : typeDefs) {
            pos = i;
            types.add(typeDef());
            typeDefEnds.put(i, pos);
        }
        // Pass 3: everything in order.
        pos = start;
        LinkedHashMap<GlobalVar, Function> functions = new LinkedHashMap<>();
        while (!at(TokenKind.EOF) && !at(TokenKind.METADATA)) {
            if (atIdent("def")) {
                Token kw = next();
                Token g = expect(TokenKind.GLOBAL, "a global name like @main");
                functions.put(new GlobalVar(g.text()), functionRest(kw));
                graph.clear();
            } else if (atIdent("type") && typeDefEnds.containsKey(pos)) {
                pos = typeDefEnds.get(pos); // built in pass 2; building it again would make new type variables
            } else if (atIdent("type")) {
                typeDef(); // malformed (pass 1 did not recognise it): reports the syntax error
            } else {
                throw error(peek(), "expected 'def' or 'type' at the top level of a module, found " + peek().describe());
            }
        }
        end();
        LinkedHashMap<GlobalTypeVar, TypeData> typeMap = new LinkedHashMap<>();
        for (TypeData td : types) typeMap.put(td.header(), td);
        return IRModule.of(functions, typeMap);
    }

    /** {@code type Name[A, B] { Ctor(T, ...), Ctor2 }}; trailing comma allowed. */
    private TypeData typeDef() {
        expectIdent("type");
        Token nameTok = expect(TokenKind.IDENT, "a type name");
        GlobalTypeVar header = adts.get(nameTok.text());
        int tm = typeMark();
        List<TypeVar> params = typeParams();
        expect(TokenKind.LBRACE, "'{'");
        List<Constructor> ctors = new ArrayList<>();
        while (!at(TokenKind.RBRACE)) {
            Token c = expect(TokenKind.IDENT, "a constructor name");
            List<Type> inputs = new ArrayList<>();
            if (accept(TokenKind.LPAREN)) {
                while (!at(TokenKind.RPAREN)) {
                    inputs.add(type());
                    if (!accept(TokenKind.COMMA)) break;
                }
                expect(TokenKind.RPAREN, "',' or ')'");
            }
            Constructor existing = constructors.get(c.text());
            Constructor ctor = new Constructor(c.text(), inputs, header, ctors.size());
            if (existing != null && !existing.belongsTo().equals(header)) {
                throw error(c, "constructor " + c.text() + " is already defined by type " + existing.belongsTo().name());
            }
            if (existing != null && ctors.stream().anyMatch(k -> k.name().equals(c.text()))) {
                throw error(c, "duplicate constructor " + c.text() + " in type " + header.name());
            }
            constructors.put(c.text(), ctor);
            ctors.add(ctor);
            if (!accept(TokenKind.COMMA)) break;
        }
        expect(TokenKind.RBRACE, "',' or '}'");
        restoreTypes(tm);
        return new TypeData(header, params, ctors);
    }

    /** Optional {@code [A, B]}: declares type variables in the current type scope. */
    private List<TypeVar> typeParams() {
        List<TypeVar> params = new ArrayList<>();
        if (accept(TokenKind.LBRACKET)) {
            while (!at(TokenKind.RBRACKET)) {
                Token t = expect(TokenKind.IDENT, "a type parameter name");
                TypeVar tv = TypeVar.fresh(t.text());
                bindTypeVar(tv);
                params.add(tv);
                if (!accept(TokenKind.COMMA)) break;
            }
            expect(TokenKind.RBRACKET, "',' or ']'");
        }
        return params;
    }

    /** After {@code fn} or {@code def @name}: {@code [A](params, attrs) -> R { body }}. */
    private Function functionRest(Token kw) {
        int tm = typeMark();
        int m = mark();
        List<TypeVar> tparams = typeParams();
        expect(TokenKind.LPAREN, "'(' to start the parameter list");
        List<Var> params = new ArrayList<>();
        Map<String, AttrValue> attrs = new LinkedHashMap<>();
        while (!at(TokenKind.RPAREN)) {
            if (at(TokenKind.IDENT) && peek(1).is(TokenKind.EQ)) {
                Token key = next();
                next();
                attrs.put(key.text(), attrValue());
            } else {
                Token p = expect(TokenKind.LOCAL, "a parameter like %x");
                Type ann = accept(TokenKind.COLON) ? type() : null;
                params.add(Var.fresh(p.text(), ann, span(p)));
            }
            if (!accept(TokenKind.COMMA)) break;
        }
        expect(TokenKind.RPAREN, "',' or ')'");
        for (Var p : params) bindLocal(p);
        Type ret = accept(TokenKind.ARROW) ? type() : null;
        Expr body = block();
        restore(m);
        restoreTypes(tm);
        return new Function(params, body, ret, tparams, new Attrs(attrs), span(kw));
    }

    /** {@code { expr }}. */
    private Expr block() {
        expect(TokenKind.LBRACE, "'{'");
        Expr e = expr();
        expect(TokenKind.RBRACE, "'}'");
        return e;
    }

    // ------------------------------------------------------------------ expressions

    private record LetFrame(Var var, Expr value, Span span) {}

    /** Bindings ({@code let %x = e;} and {@code %n = e;}) in a loop, then the body; lets nest inside-out. */
    private Expr expr() {
        return expr(true);
    }

    /**
     * {@code counted} is false only for a binding's value that starts with '(' — the printer writes a
     * let chain in value position as {@code let %a = (\n let %b = ...; %b\n);} — so that one level
     * of the program is one level of the limit; the parenthesised expression counts it.
     */
    private Expr expr(boolean counted) {
        if (counted) enter(peek());
        int m = mark();
        List<LetFrame> lets = new ArrayList<>();
        while (true) {
            if (atIdent("let")) {
                Token kw = next();
                Token v = expect(TokenKind.LOCAL, "a variable like %x after 'let'");
                Type ann = accept(TokenKind.COLON) ? type() : null;
                expect(TokenKind.EQ, "'='");
                Var var = Var.fresh(v.text(), ann, span(v));
                boolean recursive = atIdent("fn");
                if (recursive) bindLocal(var);
                Expr value = expr(!at(TokenKind.LPAREN));
                if (!recursive) bindLocal(var);
                expect(TokenKind.SEMI, "';' after the let value");
                lets.add(new LetFrame(var, value, span(kw)));
            } else if (at(TokenKind.LOCAL) && peek(1).is(TokenKind.EQ)) {
                Token v = next();
                next();
                Expr value = expr(!at(TokenKind.LPAREN));
                expect(TokenKind.SEMI, "';' after the binding of %" + v.text());
                graph.put(v.text(), value);
            } else {
                break;
            }
        }
        Expr body = binary();
        for (int i = lets.size() - 1; i >= 0; i--) {
            LetFrame f = lets.get(i);
            body = new Let(f.var, f.value, body, f.span);
        }
        restore(m);
        if (counted) leave();
        return body;
    }

    private static int precedence(TokenKind k) {
        return switch (k) {
            case STAR, SLASH -> 4;
            case PLUS, MINUS -> 3;
            case LT, LE, GT, GE -> 2;
            case EQEQ, NE -> 1;
            default -> 0;
        };
    }

    private static String opName(TokenKind k) {
        return switch (k) {
            case STAR -> "multiply";
            case SLASH -> "divide";
            case PLUS -> "add";
            case MINUS -> "subtract";
            case LT -> "less";
            case LE -> "less_equal";
            case GT -> "greater";
            case GE -> "greater_equal";
            case EQEQ -> "equal";
            case NE -> "not_equal";
            default -> throw new IllegalStateException(k.name());
        };
    }

    /** Infix expressions by operator precedence with explicit stacks (left-associative). */
    private Expr binary() {
        ArrayList<Expr> operands = new ArrayList<>();
        ArrayList<Token> ops = new ArrayList<>();
        operands.add(unary());
        while (precedence(peek().kind()) > 0) {
            Token op = next();
            int p = precedence(op.kind());
            while (!ops.isEmpty() && precedence(ops.getLast().kind()) >= p) reduce(operands, ops);
            ops.add(op);
            operands.add(unary());
        }
        while (!ops.isEmpty()) reduce(operands, ops);
        return operands.getFirst();
    }

    private void reduce(ArrayList<Expr> operands, ArrayList<Token> ops) {
        Token op = ops.removeLast();
        Expr rhs = operands.removeLast();
        Expr lhs = operands.removeLast();
        operands.add(new Call(Op.get(opName(op.kind())), List.of(lhs, rhs), Attrs.EMPTY, List.of(), span(op)));
    }

    private Expr unary() {
        if (at(TokenKind.MINUS)) {
            Token minus = next();
            if (at(TokenKind.NUMBER)) return postfix(literal(next(), true, minus), minus);
            enter(minus);
            Expr operand = unary();
            leave();
            return new Call(Op.get("negative"), List.of(operand), Attrs.EMPTY, List.of(), span(minus));
        }
        Token start = peek();
        return postfix(primary(), start);
    }

    /** Calls {@code e(args)} and projections {@code e.0}, left to right. */
    private Expr postfix(Expr e, Token start) {
        while (true) {
            if (at(TokenKind.LPAREN)) {
                Token lp = next();
                e = callRest(e, start);
            } else if (at(TokenKind.DOT)) {
                next();
                Token idx = expect(TokenKind.NUMBER, "a tuple index after '.'");
                int i;
                try {
                    i = Integer.parseInt(idx.text());
                } catch (NumberFormatException ex) {
                    throw error(idx, "tuple index must be a non-negative integer, got '" + idx.text() + "'");
                }
                e = new TupleGetItem(e, i, span(idx));
            } else {
                return e;
            }
        }
    }

    private Expr callRest(Expr callee, Token start) {
        List<Expr> args = new ArrayList<>();
        Map<String, AttrValue> attrs = new LinkedHashMap<>();
        while (!at(TokenKind.RPAREN)) {
            if (at(TokenKind.IDENT) && peek(1).is(TokenKind.EQ)) {
                Token key = next();
                next();
                if (attrs.containsKey(key.text())) throw error(key, "duplicate attribute '" + key.text() + "'");
                attrs.put(key.text(), attrValue());
            } else {
                if (!attrs.isEmpty()) throw error(peek(), "positional argument after keyword attributes");
                args.add(expr());
            }
            if (!accept(TokenKind.COMMA)) break;
        }
        expect(TokenKind.RPAREN, "',' or ')' in the argument list");
        return new Call(callee, args, new Attrs(attrs), List.of(), span(start));
    }

    private Expr primary() {
        Token t = peek();
        switch (t.kind()) {
            case LOCAL -> {
                next();
                Var v = locals.get(t.text());
                if (v != null) return v;
                Expr g = graph.get(t.text());
                if (g != null) return g;
                Var free = freeVars.get(t.text());
                if (free != null) return free;
                throw error(t, "unbound variable %" + t.text());
            }
            case GLOBAL -> {
                next();
                if (globals != null && !globals.contains(t.text())) throw error(t, "unknown global @" + t.text());
                return new GlobalVar(t.text());
            }
            case NUMBER -> {
                next();
                return literal(t, false, t);
            }
            case LPAREN -> {
                next();
                if (accept(TokenKind.RPAREN)) return new Tuple(List.of(), span(t));
                Expr first = expr();
                if (accept(TokenKind.RPAREN)) return first;
                expect(TokenKind.COMMA, "',' or ')'");
                List<Expr> fields = new ArrayList<>();
                fields.add(first);
                while (!at(TokenKind.RPAREN)) {
                    fields.add(expr());
                    if (!accept(TokenKind.COMMA)) break;
                }
                expect(TokenKind.RPAREN, "',' or ')' in the tuple");
                return new Tuple(fields, span(t));
            }
            case IDENT -> {
                return identExpr(t);
            }
            default -> throw error(t, "expected an expression, found " + t.describe());
        }
    }

    private Expr identExpr(Token t) {
        String w = t.text();
        switch (w) {
            case "fn" -> {
                next();
                return functionRest(t);
            }
            case "if" -> {
                return ifExpr();
            }
            case "match" -> {
                return matchExpr();
            }
            case "True", "False" -> {
                next();
                return new Constant(NDArray.scalar(w.equals("True")), span(t));
            }
            case "meta" -> {
                return metaRef();
            }
            case "ref" -> {
                next();
                expect(TokenKind.LPAREN, "'(' after ref");
                Expr v = expr();
                expect(TokenKind.RPAREN, "')'");
                return new RefCreate(v, span(t));
            }
            case "ref_read" -> {
                next();
                expect(TokenKind.LPAREN, "'(' after ref_read");
                Expr v = expr();
                expect(TokenKind.RPAREN, "')'");
                return new RefRead(v, span(t));
            }
            case "ref_write" -> {
                next();
                expect(TokenKind.LPAREN, "'(' after ref_write");
                Expr r = expr();
                expect(TokenKind.COMMA, "',' between the reference and the value");
                Expr v = expr();
                expect(TokenKind.RPAREN, "')'");
                return new RefWrite(r, v, span(t));
            }
            case "let", "def", "type", "else" -> throw error(t, "'" + w + "' cannot start an expression here");
            default -> {
                next();
                Constructor c = constructors.get(w);
                if (c != null) return c;
                if (Character.isUpperCase(w.charAt(0))) throw error(t, "unknown constructor " + w);
                return Op.get(w);
            }
        }
    }

    /** {@code if (c) { } else if (c2) { } else { }}; else-if chains are collected in a loop. */
    private Expr ifExpr() {
        List<Token> kws = new ArrayList<>();
        List<Expr> conds = new ArrayList<>();
        List<Expr> thens = new ArrayList<>();
        Expr elseBranch;
        while (true) {
            kws.add(next()); // 'if'
            expect(TokenKind.LPAREN, "'(' after if");
            conds.add(expr());
            expect(TokenKind.RPAREN, "')' after the condition");
            thens.add(block());
            if (!atIdent("else")) throw error(peek(), "expected 'else' (an if needs both branches), found " + peek().describe());
            next();
            if (atIdent("if")) continue;
            elseBranch = block();
            break;
        }
        Expr e = elseBranch;
        for (int i = conds.size() - 1; i >= 0; i--) e = new If(conds.get(i), thens.get(i), e, span(kws.get(i)));
        return e;
    }

    /**
     * {@code match (e) { pattern => body, ... }}; {@code match?} is the non-exhaustive form. {@code match (a, b)}
     * matches the tuple {@code (a, b)}: the match's own parentheses hold the tuple's fields, as its tuple patterns do.
     */
    private Expr matchExpr() {
        Token kw = next();
        boolean complete = !accept(TokenKind.QUESTION);
        Token open = expect(TokenKind.LPAREN, "'(' after match");
        Expr data = expr();
        if (at(TokenKind.COMMA)) {
            List<Expr> fields = new ArrayList<>(List.of(data));
            while (accept(TokenKind.COMMA) && !at(TokenKind.RPAREN)) fields.add(expr());
            data = new Tuple(fields, span(open));
        }
        expect(TokenKind.RPAREN, "',' or ')' after the matched value");
        expect(TokenKind.LBRACE, "'{' to start the match clauses");
        List<Clause> clauses = new ArrayList<>();
        while (!at(TokenKind.RBRACE)) {
            int m = mark();
            Pattern p = pattern();
            expect(TokenKind.FATARROW, "'=>' after the pattern");
            Expr body = at(TokenKind.LBRACE) ? block() : expr();
            restore(m);
            clauses.add(new Clause(p, body));
            if (!accept(TokenKind.COMMA)) break;
        }
        expect(TokenKind.RBRACE, "',' or '}' in the match");
        return new Match(data, clauses, complete, span(kw));
    }

    private Pattern pattern() {
        enter(peek());
        Pattern p = patternAtom();
        leave();
        return p;
    }

    private Pattern patternAtom() {
        Token t = peek();
        switch (t.kind()) {
            case LOCAL -> {
                next();
                Type ann = accept(TokenKind.COLON) ? type() : null;
                Var v = Var.fresh(t.text(), ann, span(t));
                bindLocal(v);
                return new Pattern.Bind(v);
            }
            case LPAREN -> {
                next();
                List<Pattern> fields = new ArrayList<>();
                boolean comma = false;
                while (!at(TokenKind.RPAREN)) {
                    fields.add(pattern());
                    if (!accept(TokenKind.COMMA)) break;
                    comma = true;
                }
                expect(TokenKind.RPAREN, "',' or ')' in the tuple pattern");
                // (p) is just p in parentheses; (p,) is a one-field tuple.
                return fields.size() == 1 && !comma ? fields.getFirst() : new Pattern.TuplePattern(fields);
            }
            case IDENT -> {
                next();
                if (t.text().equals("_")) return Pattern.WILDCARD;
                Constructor c = constructors.get(t.text());
                if (c == null) throw error(t, "unknown constructor " + t.text() + " in pattern");
                List<Pattern> args = new ArrayList<>();
                if (accept(TokenKind.LPAREN)) {
                    while (!at(TokenKind.RPAREN)) {
                        args.add(pattern());
                        if (!accept(TokenKind.COMMA)) break;
                    }
                    expect(TokenKind.RPAREN, "',' or ')' in the constructor pattern");
                }
                if (args.size() != c.inputs().size()) {
                    throw error(t, "constructor " + c.name() + " has " + c.inputs().size() + " field(s), the pattern gives " + args.size());
                }
                return new Pattern.Ctor(c, args);
            }
            default -> throw error(t, "expected a pattern (_, %x, a constructor or a tuple), found " + t.describe());
        }
    }

    /** {@code meta[relay.Constant][i]}: constant {@code i} of the metadata section. */
    private Expr metaRef() {
        Token kw = next();
        expect(TokenKind.LBRACKET, "'[' after meta");
        Token kind = expect(TokenKind.IDENT, "relay.Constant");
        if (!kind.text().equals(Metadata.CONSTANTS)) throw error(kind, "unsupported metadata kind " + kind.text() + " (only relay.Constant)");
        expect(TokenKind.RBRACKET, "']'");
        expect(TokenKind.LBRACKET, "'['");
        Token idx = expect(TokenKind.NUMBER, "a constant index");
        expect(TokenKind.RBRACKET, "']'");
        int i;
        try {
            i = Integer.parseInt(idx.text());
        } catch (NumberFormatException e) {
            throw error(idx, "metadata index must be a non-negative integer, got '" + idx.text() + "'");
        }
        if (metaData == null) throw error(kw, "meta[relay.Constant][" + i + "] used but the text has no #[metadata] section");
        if (i >= metaData.size()) throw error(idx, "meta[relay.Constant][" + i + "] is out of range: the metadata section has " + metaData.size() + " constant(s)");
        return metaConstants.computeIfAbsent(i, k -> new Constant(metaData.get(k), span(kw)));
    }

    private Constant literal(Token num, boolean negative, Token start) {
        try {
            return new Constant(Literals.toArray(Literals.parse(num.text(), negative)), span(start));
        } catch (IllegalArgumentException e) {
            throw error(num, e.getMessage());
        }
    }

    // ------------------------------------------------------------------ attributes

    /** {@code 3}, {@code -1}, {@code 1e-05f}, {@code "NCHW"}, {@code True}, {@code None}, {@code [1, [2, 3]]}. */
    private AttrValue attrValue() {
        Token t = peek();
        switch (t.kind()) {
            case MINUS, NUMBER -> {
                boolean neg = accept(TokenKind.MINUS);
                Token num = expect(TokenKind.NUMBER, "a number after '-'");
                try {
                    Literals.Number n = Literals.parse(num.text(), neg, true);
                    return n.isFloat() ? new AttrValue.FloatValue(n.real()) : new AttrValue.IntValue(n.integer().longValue());
                } catch (IllegalArgumentException e) {
                    throw error(num, e.getMessage());
                }
            }
            case STRING -> {
                next();
                return new AttrValue.StringValue(t.text());
            }
            case LBRACKET, LPAREN -> {
                enter(t);
                next();
                TokenKind close = t.is(TokenKind.LBRACKET) ? TokenKind.RBRACKET : TokenKind.RPAREN;
                List<AttrValue> vs = new ArrayList<>();
                while (!at(close)) {
                    vs.add(attrValue());
                    if (!accept(TokenKind.COMMA)) break;
                }
                expect(close, "',' or '" + (close == TokenKind.RBRACKET ? "]" : ")") + "' in the attribute list");
                leave();
                return new AttrValue.ListValue(vs);
            }
            case IDENT -> {
                next();
                return switch (t.text()) {
                    case "True" -> new AttrValue.BoolValue(true);
                    case "False" -> new AttrValue.BoolValue(false);
                    case "None" -> AttrValue.NONE;
                    default -> throw error(t, "expected an attribute value (number, string, True, False, None or list), found " + t.describe());
                };
            }
            default -> throw error(t, "expected an attribute value (number, string, True, False, None or list), found " + t.describe());
        }
    }

    // ------------------------------------------------------------------ types

    private Type type() {
        enter(peek());
        Type ty = typeAtom();
        leave();
        return ty;
    }

    private Type typeAtom() {
        Token t = peek();
        switch (t.kind()) {
            case LPAREN -> {
                next();
                List<Type> fields = new ArrayList<>();
                boolean comma = false;
                while (!at(TokenKind.RPAREN)) {
                    fields.add(type());
                    if (!accept(TokenKind.COMMA)) break;
                    comma = true;
                }
                expect(TokenKind.RPAREN, "',' or ')' in the tuple type");
                return fields.size() == 1 && !comma ? fields.getFirst() : new TupleType(fields);
            }
            case IDENT -> {
                next();
                String w = t.text();
                switch (w) {
                    case "fn" -> {
                        int tm = typeMark();
                        List<TypeVar> tps = typeParams();
                        expect(TokenKind.LPAREN, "'(' in the function type");
                        List<Type> args = new ArrayList<>();
                        while (!at(TokenKind.RPAREN)) {
                            args.add(type());
                            if (!accept(TokenKind.COMMA)) break;
                        }
                        expect(TokenKind.RPAREN, "',' or ')' in the function type");
                        expect(TokenKind.ARROW, "'->' in the function type");
                        Type ret = type();
                        restoreTypes(tm);
                        return new FuncType(tps, args, ret, List.of());
                    }
                    case "Tensor" -> {
                        return tensorType();
                    }
                    case "ref" -> {
                        expect(TokenKind.LPAREN, "'(' after ref");
                        Type v = type();
                        expect(TokenKind.RPAREN, "')'");
                        return new RefType(v);
                    }
                    case "_" -> {
                        return IncompleteType.fresh();
                    }
                    default -> {
                        if (DType.isDType(w)) return TensorType.scalar(dtype(t));
                        TypeVar tv = typeVars.get(w);
                        if (tv != null) return tv;
                        GlobalTypeVar adt = adts.get(w);
                        if (adt == null) throw error(t, "unknown type " + w);
                        if (!accept(TokenKind.LBRACKET)) return adt;
                        List<Type> args = new ArrayList<>();
                        while (!at(TokenKind.RBRACKET)) {
                            args.add(type());
                            if (!accept(TokenKind.COMMA)) break;
                        }
                        expect(TokenKind.RBRACKET, "',' or ']' in the type arguments");
                        return new TypeCall(adt, args);
                    }
                }
            }
            default -> throw error(t, "expected a type, found " + t.describe());
        }
    }

    private DType dtype(Token t) {
        try {
            return DType.parse(t.text());
        } catch (IllegalArgumentException e) {
            throw error(t, e.getMessage());
        }
    }

    /** After {@code Tensor}: {@code [(d0, d1), dtype]}; {@code (3)} and {@code (3,)} are both rank 1. */
    private TensorType tensorType() {
        expect(TokenKind.LBRACKET, "'[' after Tensor");
        expect(TokenKind.LPAREN, "'(' to start the shape");
        List<Dim> dims = new ArrayList<>();
        while (!at(TokenKind.RPAREN)) {
            Token start = peek();
            Dim d = dim();
            // A constant dimension the type checker could only see through after simplifying (1-128, 10/0) is refused
            // here, where it is written: passes simplified it later and found an ill-typed module instead of a user
            // error. Symbolic ones (n - 1) stay as written: their value is the program's to give.
            if (constant(d)) {
                Dim simple;
                try {
                    simple = Dims.simplify(d);
                } catch (ArithmeticException e) {
                    throw error(start, "the dimension cannot be computed: " + e.getMessage());
                }
                if (simple.isStatic() && simple.value() < 0) throw error(start, "a dimension must not be negative, this one is " + simple.value());
            }
            dims.add(d);
            if (!accept(TokenKind.COMMA)) break;
        }
        expect(TokenKind.RPAREN, "',' or ')' in the shape");
        expect(TokenKind.COMMA, "',' before the dtype");
        Token d = expect(TokenKind.IDENT, "a dtype such as float32");
        if (!DType.isDType(d.text())) throw error(d, "unknown dtype '" + d.text() + "'");
        expect(TokenKind.RBRACKET, "']'");
        return new TensorType(dims, dtype(d));
    }

    /** Whether {@code d} is integer arithmetic alone (no size variable, no {@code ?}); nested as deep as the parser allows. */
    private static boolean constant(Dim d) {
        return switch (d) {
            case Dim.Int i -> true;
            case Dim.Sym s -> false;
            case Dim.Any a -> false;
            case Dim.Bin b -> constant(b.lhs()) && constant(b.rhs());
        };
    }

    private static Dim.BinOp dimOp(TokenKind k) {
        return switch (k) {
            case PLUS -> Dim.BinOp.ADD;
            case MINUS -> Dim.BinOp.SUB;
            case STAR -> Dim.BinOp.MUL;
            case SLASH -> Dim.BinOp.FLOOR_DIV;
            case PERCENT -> Dim.BinOp.FLOOR_MOD;
            default -> null;
        };
    }

    /** A dimension expression: integers, size variables, {@code ?}, {@code + - * / %}, parentheses. */
    private Dim dim() {
        ArrayList<Dim> operands = new ArrayList<>();
        ArrayList<Dim.BinOp> ops = new ArrayList<>();
        operands.add(dimAtom());
        Dim.BinOp op;
        while ((op = dimOp(peek().kind())) != null) {
            next();
            while (!ops.isEmpty() && ops.getLast().precedence >= op.precedence) reduceDim(operands, ops);
            ops.add(op);
            operands.add(dimAtom());
        }
        while (!ops.isEmpty()) reduceDim(operands, ops);
        return operands.getFirst();
    }

    private static void reduceDim(ArrayList<Dim> operands, ArrayList<Dim.BinOp> ops) {
        Dim.BinOp op = ops.removeLast();
        Dim r = operands.removeLast();
        Dim l = operands.removeLast();
        operands.add(new Dim.Bin(op, l, r));
    }

    private Dim dimAtom() {
        Token t = peek();
        switch (t.kind()) {
            case QUESTION -> {
                next();
                return Dim.ANY;
            }
            case MINUS, NUMBER -> {
                boolean neg = accept(TokenKind.MINUS);
                Token num = expect(TokenKind.NUMBER, "a number after '-'");
                try {
                    long v = Long.parseLong(num.text());
                    return Dim.of(neg ? -v : v);
                } catch (NumberFormatException e) {
                    throw error(num, "a dimension must be an integer, got '" + num.text() + "'");
                }
            }
            case IDENT -> {
                next();
                return Dim.sym(t.text());
            }
            case LPAREN -> {
                enter(t);
                next();
                Dim d = dim();
                expect(TokenKind.RPAREN, "')'");
                leave();
                return d;
            }
            default -> throw error(t, "expected a dimension (integer, size variable or ?), found " + t.describe());
        }
    }
}
