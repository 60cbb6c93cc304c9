package dev.relayfarm.gen;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The part of a module the Relay text format can express. As in TVM, explicit call type arguments
 * have no text syntax ({@code RelayPrinter} documents this), so the text round trip is checked
 * against the module with them removed; the JSON round trip keeps them and is checked against the
 * module itself.
 */
final class TextForm {
    private TextForm() {}

    static IRModule of(IRModule m) {
        ExprRewriter drop = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return post instanceof Call c && !c.typeArgs().isEmpty()
                        ? new Call(c.callee(), c.args(), c.attrs(), List.of(), c.span())
                        : post;
            }
        };
        Map<GlobalVar, Function> fns = new LinkedHashMap<>();
        m.functions().forEach((gv, f) -> fns.put(gv, (Function) drop.rewrite(f)));
        return IRModule.of(fns, m.types());
    }
}
