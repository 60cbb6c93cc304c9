package dev.relayfarm.serde;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A JSON value plus how it was reached, so every read error can name its JSON path. The path string
 * is built only when an error is raised.
 */
final class JsonCursor {
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    final JsonNode node;
    private final JsonCursor parent;
    private final String key; // null for an array element
    private final int index;
    /** JSON levels below the root; the reader's recursion over types, patterns, dims and attributes follows it. */
    final int depth;

    private JsonCursor(JsonNode node, JsonCursor parent, String key, int index) {
        this.node = node;
        this.parent = parent;
        this.key = key;
        this.index = index;
        this.depth = parent == null ? 0 : parent.depth + 1;
        // A tree built by a caller's own ObjectMapper has not been through IrJson's nesting limit.
        if (depth > IrJson.MAX_JSON_DEPTH) throw error("JSON nesting deeper than " + IrJson.MAX_JSON_DEPTH + " levels; the limit is IrJson.MAX_JSON_DEPTH");
    }

    static JsonCursor root(JsonNode node) {
        return new JsonCursor(node, null, null, -1);
    }

    /** Built leaf to root in a loop: a cursor can be a few hundred levels deep. */
    String path() {
        ArrayList<String> steps = new ArrayList<>();
        for (JsonCursor c = this; c.parent != null; c = c.parent) {
            if (c.key == null) steps.add("[" + c.index + "]");
            else if (IDENT.matcher(c.key).matches()) steps.add("." + c.key);
            else steps.add("['" + c.key.replace("'", "\\'") + "']");
        }
        StringBuilder sb = new StringBuilder("$");
        for (int i = steps.size() - 1; i >= 0; i--) sb.append(steps.get(i));
        return sb.toString();
    }

    IrJsonException error(String detail) {
        return new IrJsonException(path(), detail);
    }

    IrJsonException error(String detail, Throwable cause) {
        return new IrJsonException(path(), detail, cause);
    }

    JsonCursor object() {
        if (!node.isObject()) throw error("expected an object, got " + describe(node));
        return this;
    }

    /** Rejects fields the format does not define (typos, or a newer writer's fields). */
    JsonCursor onlyFields(Set<String> allowed, String what) {
        object();
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            String n = names.next();
            if (!allowed.contains(n)) throw error("unknown field '" + n + "' in " + what);
        }
        return this;
    }

    boolean has(String name) {
        return node.has(name);
    }

    JsonCursor field(String name) {
        object();
        JsonNode child = node.get(name);
        if (child == null) throw error("missing field '" + name + "'");
        return new JsonCursor(child, this, name, -1);
    }

    /** The field, or null when absent. */
    JsonCursor optField(String name) {
        JsonNode child = node.get(name);
        return child == null ? null : new JsonCursor(child, this, name, -1);
    }

    List<JsonCursor> elements() {
        if (!node.isArray()) throw error("expected an array, got " + describe(node));
        List<JsonCursor> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) out.add(new JsonCursor(node.get(i), this, null, i));
        return out;
    }

    /** Elements of an optional array field; empty when the field is absent. */
    List<JsonCursor> optElements(String name) {
        JsonCursor f = optField(name);
        return f == null ? List.of() : f.elements();
    }

    List<Map.Entry<String, JsonCursor>> fields() {
        object();
        List<Map.Entry<String, JsonCursor>> out = new ArrayList<>(node.size());
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            out.add(Map.entry(e.getKey(), new JsonCursor(e.getValue(), this, e.getKey(), -1)));
        }
        return out;
    }

    String text() {
        if (!node.isTextual()) throw error("expected a string, got " + describe(node));
        return node.textValue();
    }

    boolean bool() {
        if (!node.isBoolean()) throw error("expected true or false, got " + describe(node));
        return node.booleanValue();
    }

    long longValue() {
        if (!node.isIntegralNumber() || !node.canConvertToLong()) throw error("expected a 64-bit integer, got " + describe(node));
        return node.longValue();
    }

    int intValue() {
        if (!node.isIntegralNumber() || !node.canConvertToInt()) throw error("expected a 32-bit integer, got " + describe(node));
        return node.intValue();
    }

    int nonNegativeInt() {
        int v = intValue();
        if (v < 0) throw error("expected a non-negative integer, got " + v);
        return v;
    }

    /** An index into a table of {@code size} entries named {@code what} ("node", "var", ...). */
    int ref(int size, String what) {
        if (!node.isIntegralNumber() || !node.canConvertToInt()) throw error("expected a " + what + " id (an integer), got " + describe(node));
        int v = node.intValue();
        if (v < 0 || v >= size) {
            throw error("unknown " + what + " id " + v + (size == 0 ? " (there are no " + what + "s)" : " (valid ids are 0.." + (size - 1) + ")"));
        }
        return v;
    }

    static String describe(JsonNode n) {
        String s = n.isContainerNode() ? (n.isArray() ? "an array" : "an object") : n.toString();
        return s.length() > 60 ? s.substring(0, 57) + "..." : s;
    }
}
