package dev.relayfarm.ir;

import java.util.List;

/**
 * {@code fn [A](%x: A, ...) -> R { body }}. {@code retType} is {@code null} when not annotated.
 * Attributes mark e.g. fused kernels ({@code Primitive=1}).
 */
public record Function(List<Var> params, Expr body, Type retType, List<TypeVar> typeParams, Attrs attrs, Span span)
        implements Expr {
    public static final String PRIMITIVE = "Primitive";

    public Function {
        params = List.copyOf(params);
        typeParams = List.copyOf(typeParams);
    }

    public Function(List<Var> params, Expr body) {
        this(params, body, null, List.of(), Attrs.EMPTY, Span.NONE);
    }

    public Function(List<Var> params, Expr body, Type retType) {
        this(params, body, retType, List.of(), Attrs.EMPTY, Span.NONE);
    }

    public Function withBody(Expr newBody) {
        return newBody == body ? this : new Function(params, newBody, retType, typeParams, attrs, span);
    }

    public Function withAttrs(Attrs newAttrs) {
        return new Function(params, body, retType, typeParams, newAttrs, span);
    }

    public boolean isPrimitive() {
        return attrs.get(PRIMITIVE).map(v -> v instanceof AttrValue.IntValue(long i) && i != 0).orElse(false);
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return "Function(" + params + ")";
    }
}
