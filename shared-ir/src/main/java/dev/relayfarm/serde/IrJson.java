package dev.relayfarm.serde;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.relayfarm.ir.IRModule;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The versioned JSON form of a Relay {@link IRModule}: {@code {"format": "relayfarm.ir", "version": 1,
 * ...}}. The layout is described in {@code schemas/README.md} and checked by
 * {@code schemas/ir.schema.json}.
 *
 * <p>Expressions are a flat node table in post-order (children by index), so writing and reading never
 * recurse per expression node: 100,000-deep let chains and dataflow chains are fine. Shared
 * sub-expressions stay shared, variables and type variables keep their identity (one table entry each),
 * and tensors above {@link Options#inlineLimitBytes()} go to a {@link BlobSink} and are referenced by
 * {@link dev.relayfarm.ir.NDArray#sha256()}.
 *
 * <p>Round trip: {@code StructuralEquality.diff(m, IrJson.read(IrJson.write(m, sink, opts), source))} is
 * empty. Variables and type variables read back get fresh ids (the document's ids are the writer's, kept
 * for diagnostics), so they never collide with variables the reading process creates later.
 */
public final class IrJson {
    /** The value of the top-level {@code "format"} field. */
    public static final String FORMAT = "relayfarm.ir";
    /** The document version this code writes and the only one it reads. */
    public static final int VERSION = 1;

    /**
     * The deepest expression nesting a document may describe — functions in functions, ifs, matches,
     * tuples directly in tuples, lets in let values — the same limit as the text parser's default
     * ({@code ParserOptions.DEFAULT_MAX_DEPTH}), so whatever parses also round-trips through JSON, and
     * nothing read here can overflow the stack of a recursive consumer (type inference, printing).
     * Dataflow (calls in calls) is not nesting here: it is unbounded, as in the node table.
     */
    public static final int MAX_NESTING_DEPTH = 128;
    /**
     * The deepest JSON nesting accepted: a type or pattern nested {@link #MAX_NESTING_DEPTH} deep takes
     * two JSON levels per level (an object and its field list), plus the document's own few levels.
     * Jackson's own default (1000) would let the reader's recursion over types overflow a small stack.
     */
    public static final int MAX_JSON_DEPTH = 2 * MAX_NESTING_DEPTH + 16;

    static final ObjectMapper MAPPER = JsonMapper.builder(com.fasterxml.jackson.core.JsonFactory.builder()
                    .streamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints.builder().maxNestingDepth(MAX_JSON_DEPTH).build())
                    .build())
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .build();

    /**
     * How to write a document.
     *
     * @param inlineLimitBytes constants whose payload is larger than this go to the blob sink;
     *     {@code Long.MAX_VALUE} inlines everything
     * @param spans whether to write source spans (they let services report errors at file:line:col)
     * @param pretty indent the output for people
     */
    public record Options(long inlineLimitBytes, boolean spans, boolean pretty) {
        /** Default inline limit: small constants (scalars, shape vectors) travel inline. */
        public static final long DEFAULT_INLINE_LIMIT = 1024;
        public static final Options DEFAULT = new Options(DEFAULT_INLINE_LIMIT, true, false);
        /** Self-contained documents: every constant inline. */
        public static final Options INLINE_ALL = new Options(Long.MAX_VALUE, true, false);

        public Options {
            if (inlineLimitBytes < 0) throw new IllegalArgumentException("inlineLimitBytes must be >= 0, got " + inlineLimitBytes);
        }

        public Options withInlineLimit(long bytes) {
            return new Options(bytes, spans, pretty);
        }

        public Options withSpans(boolean on) {
            return new Options(inlineLimitBytes, on, pretty);
        }

        public Options withPretty(boolean on) {
            return new Options(inlineLimitBytes, spans, on);
        }
    }

    private IrJson() {}

    // ---- writing -------------------------------------------------------------------------------

    /** Writes the document to {@code out} (UTF-8), streaming; {@code out} is flushed, not closed. */
    public static void write(IRModule module, BlobSink sink, Options options, OutputStream out) {
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            if (options.pretty()) g.useDefaultPrettyPrinter();
            new IrJsonWriter(module, sink, options, g).write();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The document as a string. */
    public static String write(IRModule module, BlobSink sink, Options options) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(module, sink, options, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * The document as a Jackson tree (e.g. to embed in a message envelope). Goes through bytes so the
     * tree has exactly the node types a parser of the text would produce (IntNode, not LongNode).
     */
    public static JsonNode writeTree(IRModule module, BlobSink sink, Options options) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(module, sink, options.withPretty(false), out);
        try {
            return MAPPER.readTree(out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A self-contained compact document: every constant inline, spans included. */
    public static String toJson(IRModule module) {
        return write(module, BlobSink.NONE, Options.INLINE_ALL);
    }

    // ---- reading -------------------------------------------------------------------------------

    /**
     * Reads a document.
     *
     * @throws IrJsonException naming the JSON path of the first problem: malformed JSON, wrong format or
     *     unsupported version, a missing or mistyped field, a dangling reference, a blob that is missing
     *     or does not match its hash
     */
    public static IRModule read(JsonNode document, BlobSource blobs) {
        return new IrJsonReader(blobs).read(JsonCursor.root(document));
    }

    public static IRModule read(String json, BlobSource blobs) {
        return read(parse(json), blobs);
    }

    public static IRModule read(InputStream in, BlobSource blobs) {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(in);
        } catch (JsonProcessingException e) {
            throw notJson(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return read(checkPresent(tree), blobs);
    }

    /** Reads a self-contained document (one that references no blobs). */
    public static IRModule fromJson(String json) {
        return read(json, BlobSource.NONE);
    }

    /** Parses JSON text into a tree, reporting syntax errors as {@link IrJsonException}s at {@code $}. */
    public static JsonNode parse(String json) {
        try {
            return checkPresent(MAPPER.readTree(json));
        } catch (com.fasterxml.jackson.core.exc.StreamConstraintsException e) {
            // Jackson's nesting error carries no location; with the text at hand, find it.
            int at = firstTooDeep(json);
            if (at < 0) throw notJson(e);
            int line = 1;
            int lineStart = 0;
            for (int i = 0; i < at; i++) {
                if (json.charAt(i) == '\n') {
                    line++;
                    lineStart = i + 1;
                }
            }
            throw new IrJsonException("$", "JSON nesting deeper than " + MAX_JSON_DEPTH + " levels at line " + line + ", column " + (at - lineStart + 1)
                    + " (character " + at + "); the limit is IrJson.MAX_JSON_DEPTH (twice IrJson.MAX_NESTING_DEPTH, plus the document's own levels)", e);
        } catch (JsonProcessingException e) {
            throw notJson(e);
        }
    }

    /** Index of the first '[' or '{' past {@link #MAX_JSON_DEPTH} (outside strings), or -1. */
    private static int firstTooDeep(String json) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char ch = json.charAt(i);
            if (inString) {
                if (ch == '\\') i++;
                else if (ch == '"') inString = false;
            } else if (ch == '"') {
                inString = true;
            } else if (ch == '[' || ch == '{') {
                if (++depth > MAX_JSON_DEPTH) return i;
            } else if (ch == ']' || ch == '}') {
                depth--;
            }
        }
        return -1;
    }

    private static JsonNode checkPresent(JsonNode tree) {
        if (tree == null || tree.isMissingNode()) throw new IrJsonException("$", "empty input: expected a JSON document");
        return tree;
    }

    private static IrJsonException notJson(JsonProcessingException e) {
        var loc = e.getLocation();
        String where = loc == null ? "" : " at line " + loc.getLineNr() + ", column " + loc.getColumnNr();
        if (e instanceof com.fasterxml.jackson.core.exc.StreamConstraintsException && e.getOriginalMessage().contains("nesting depth")) {
            return new IrJsonException("$", "JSON nesting deeper than " + MAX_JSON_DEPTH + " levels" + where
                    + "; the limit is IrJson.MAX_JSON_DEPTH (twice IrJson.MAX_NESTING_DEPTH, plus the document's own levels)", e);
        }
        return new IrJsonException("$", "not valid JSON" + where + ": " + e.getOriginalMessage(), e);
    }
}
