package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import org.junit.jupiter.api.Test;

class MismatchTextTest {

    @Test
    void rendersBothSidesAsRelayText() {
        IRModule a = RelayParser.parseModule("def @main(%x: float32) { let %y = add(%x, 1f); multiply(%y, %y) }");
        IRModule b = RelayParser.parseModule("def @main(%x: float32) { let %y = add(%x, 2f); multiply(%y, %y) }");
        StructuralEquality.Mismatch m = StructuralEquality.diff(a, b).orElseThrow();
        assertEquals("""
                at @main.body.let(%y).value.args[1]: different constant values
                  lhs: 1f
                  rhs: 2f""", MismatchText.render(m));
    }

    @Test
    void expressionsPrintAsText() {
        IRModule a = RelayParser.parseModule("def @main(%x: float32) { (add(%x, %x), %x) }");
        IRModule b = RelayParser.parseModule("def @main(%x: float32) { (subtract(%x, %x), %x) }");
        StructuralEquality.Mismatch m = StructuralEquality.diff(a, b).orElseThrow();
        assertEquals("""
                at @main.body.fields[0].callee: different operators
                  lhs: add
                  rhs: subtract""", MismatchText.render(m));
        IRModule c = RelayParser.parseModule("def @main(%x: float32) { (add(%x, %x), %x) }");
        IRModule d = RelayParser.parseModule("def @main(%x: float32) { (%x, %x) }");
        assertEquals("""
                at @main.body.fields[0]: different node kinds: Call vs Var
                  lhs: add(%x, %x)
                  rhs: %x""", MismatchText.render(StructuralEquality.diff(c, d).orElseThrow()));
    }
}
