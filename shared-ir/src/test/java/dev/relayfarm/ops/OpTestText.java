package dev.relayfarm.ops;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the small pieces of Relay text operator tests are written in, so that tests say
 * {@code "Tensor[(2, n, ?), float32]"} and {@code "newshape=[4, -1], allowzero=True"}:
 * tensor, scalar and tuple types with integer, symbolic and Any dims, {@code _} for a not yet known
 * type, and keyword attributes. (Independent of the full text parser so op tests need nothing else.)
 */
final class OpTestText {
    private final String s;
    private int pos;

    private OpTestText(String s) {
        this.s = s;
    }

    static Type type(String text) {
        OpTestText p = new OpTestText(text);
        Type t = p.type();
        p.end();
        return t;
    }

    static Attrs attrs(String text) {
        OpTestText p = new OpTestText(text);
        Map<String, AttrValue> m = new LinkedHashMap<>();
        p.skip();
        while (p.pos < p.s.length()) {
            String key = p.word();
            p.expect('=');
            m.put(key, p.value());
            p.skip();
            if (p.pos < p.s.length()) p.expect(',');
        }
        return new Attrs(m);
    }

    private Type type() {
        skip();
        if (peek() == '_') {
            pos++;
            return IncompleteType.fresh();
        }
        if (peek() == '(') {
            pos++;
            List<Type> fields = new ArrayList<>();
            skip();
            while (peek() != ')') {
                fields.add(type());
                skip();
                if (peek() == ',') pos++;
                skip();
            }
            pos++;
            return new TupleType(fields);
        }
        String w = word();
        if (!w.equals("Tensor")) return TensorType.scalar(DType.parse(w));
        expect('[');
        expect('(');
        List<Dim> dims = new ArrayList<>();
        skip();
        while (peek() != ')') {
            skip();
            if (peek() == '?') {
                pos++;
                dims.add(Dim.ANY);
            } else if (Character.isDigit(peek())) {
                Dim d = Dim.of(Long.parseLong(word()));
                skip();
                if (peek() == '*') { // "2 * n", the one dim expression the tests need
                    pos++;
                    d = dev.relayfarm.ir.Dims.mul(d, Dim.sym(word()));
                }
                dims.add(d);
            } else {
                dims.add(Dim.sym(word()));
            }
            skip();
            if (peek() == ',') pos++;
            skip();
        }
        pos++;
        expect(',');
        skip();
        DType dtype = DType.parse(word());
        expect(']');
        return new TensorType(dims, dtype);
    }

    private AttrValue value() {
        skip();
        char c = peek();
        if (c == '[') {
            pos++;
            List<AttrValue> items = new ArrayList<>();
            skip();
            while (peek() != ']') {
                items.add(value());
                skip();
                if (peek() == ',') pos++;
                skip();
            }
            pos++;
            return new AttrValue.ListValue(items);
        }
        if (c == '"') {
            int end = s.indexOf('"', pos + 1);
            String v = s.substring(pos + 1, end);
            pos = end + 1;
            return AttrValue.of(v);
        }
        String w = word();
        return switch (w) {
            case "True" -> AttrValue.of(true);
            case "False" -> AttrValue.of(false);
            case "None" -> AttrValue.NONE;
            default -> w.contains(".") || w.contains("e") ? AttrValue.of(Double.parseDouble(w.replace("f", ""))) : AttrValue.of(Long.parseLong(w));
        };
    }

    private String word() {
        skip();
        int start = pos;
        while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || "_-.".indexOf(s.charAt(pos)) >= 0)) pos++;
        if (start == pos) throw new IllegalArgumentException("expected a word at " + pos + " in: " + s);
        return s.substring(start, pos);
    }

    private void expect(char c) {
        skip();
        if (peek() != c) throw new IllegalArgumentException("expected '" + c + "' at " + pos + " in: " + s);
        pos++;
    }

    private char peek() {
        if (pos >= s.length()) throw new IllegalArgumentException("unexpected end of: " + s);
        return s.charAt(pos);
    }

    private void skip() {
        while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
    }

    private void end() {
        skip();
        if (pos != s.length()) throw new IllegalArgumentException("trailing text at " + pos + " in: " + s);
    }
}
