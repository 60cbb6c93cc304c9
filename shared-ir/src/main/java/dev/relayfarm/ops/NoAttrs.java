package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;

/** The attributes record of operators that take none; rejects any key given. */
public record NoAttrs() {
    public static final NoAttrs INSTANCE = new NoAttrs();

    public static NoAttrs parse(String op, Attrs attrs) {
        new AttrReader(op, attrs).finish();
        return INSTANCE;
    }
}
