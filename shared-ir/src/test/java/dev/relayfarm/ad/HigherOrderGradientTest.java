package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import org.junit.jupiter.api.Test;

/**
 * Reverse mode through the whole language, checked against central finite differences in float64: closures and
 * higher-order functions over an ADT list, recursion whose depth a tensor decides, {@code if}, tuples, and a
 * closure that updates a reference it captured.
 */
class HigherOrderGradientTest {
    private static final String LIST = """
            type List[A] {
              Cons(A, List[A]),
              Nil,
            }

            def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
              match (%xs) {
                Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),
                Nil => Nil,
              }
            }

            def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %xs: List[B]) -> A {
              match (%xs) {
                Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t),
                Nil => %acc,
              }
            }
            """;

    static void assertGradientsMatch(String program) {
        assertGradientsMatch(program, -1, 1);
    }

    static void assertGradientsMatch(String program, double lo, double hi) {
        IRModule m = ReverseModeTest.parse(program);
        GradientCheck.Report report = GradientCheck.check(m, ReverseModeTest.inputs(m, lo, hi), 1e-6, 5);
        assertTrue(!report.params().isEmpty());
        assertTrue(report.worstRelativeError() < 1e-5, report.toString());
    }

    @Test
    void mapAndFoldOverAList() {
        assertGradientsMatch(LIST + """
                def @main(%a: Tensor[(3), float64], %b: Tensor[(3), float64], %w: Tensor[(3), float64]) {
                  let %l = Cons(%a, Cons(%b, Cons(multiply(%a, %b), Nil)));
                  let %m = @map(fn (%x: Tensor[(3), float64]) { multiply(tanh(%x), %w) }, %l);
                  @foldl(fn (%acc: Tensor[(3), float64], %y: Tensor[(3), float64]) { add(multiply(%acc, %y), %y) }, %w, %m)
                }
                """);
    }

    @Test
    void recursionWhoseDepthIsData() {
        // x^n by recursion on an integer tensor; the derivative is n x^(n-1) whichever path ran
        assertGradientsMatch("""
                def @pow(%x: Tensor[(4), float64], %n: int32) -> Tensor[(4), float64] {
                  if (equal(%n, 0)) { ones_like(%x) } else { multiply(%x, @pow(%x, subtract(%n, 1))) }
                }
                def @main(%x: Tensor[(4), float64]) { @pow(%x, 5) }
                """);
    }

    @Test
    void ifTakesTheBranchTheDataChooses() {
        String program = """
                def @main(%x: Tensor[(4), float64], %y: Tensor[(4), float64]) {
                  if (greater(sum(%x), 0f64)) { multiply(exp(%x), %y) } else { multiply((%x, %y).1, %x) }
                }
                """;
        assertGradientsMatch(program, 0.1, 1); // then
        assertGradientsMatch(program, -1, -0.1); // else
    }

    @Test
    void closureUpdatingACapturedReference() {
        assertGradientsMatch("""
                def @main(%x: Tensor[(2, 2), float64], %a: Tensor[(2, 2), float64], %b: Tensor[(2, 2), float64]) {
                  let %r = ref(%x);
                  let %step = fn (%y: Tensor[(2, 2), float64]) { ref_write(%r, add(multiply(ref_read(%r), %y), %y)) };
                  let %_ = %step(%a);
                  let %_2 = %step(%b);
                  let %_3 = %step(sigmoid(%a));
                  ref_read(%r)
                }
                """);
    }

    @Test
    void tuplesInAndOut() {
        assertGradientsMatch("""
                def @swap(%t: (Tensor[(3), float64], Tensor[(3), float64])) { (%t.1, %t.0) }
                def @main(%x: Tensor[(3), float64], %y: Tensor[(3), float64]) {
                  let %s = @swap((multiply(%x, %y), %y));
                  (%s.0, multiply(%s.1, %s.1))
                }
                """);
    }

    @Test
    void aLocalRecursiveClosure() {
        assertGradientsMatch("""
                def @main(%x: Tensor[(3), float64]) {
                  let %loop = fn (%i: int32, %acc: Tensor[(3), float64]) -> Tensor[(3), float64] {
                    if (less(%i, 3)) { %loop(add(%i, 1), tanh(multiply(%acc, %x))) } else { %acc }
                  };
                  %loop(0, %x)
                }
                """);
    }

    @Test
    void anOperatorWithoutAGradientIsNamedWithItsPlace() {
        IRModule m = ReverseModeTest.parse("""
                def @main(%x: Tensor[(3, 3), float64]) {
                  add(det(%x), 1f64)
                }
                """);
        GradientException e = org.junit.jupiter.api.Assertions.assertThrows(GradientException.class, () -> ReverseMode.gradient(m, "main"));
        org.junit.jupiter.api.Assertions.assertEquals("gradient: no gradient registered for operator det at test:3:7", e.getMessage());
    }

    @Test
    void aLongOperatorChainDoesNotOverflowTheStack() {
        // 100,000 operators become ~1.5M nodes to type-check (about a minute on 2 cores): the long suite runs that
        // length, the default one a tenth of it, which the walk handles the same way (iteratively)
        int length = Boolean.getBoolean("relayfarm.long") ? 100_000 : 10_000;
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(2), float32]) {\n");
        sb.append("  %0 = add(%x, 1f);\n");
        for (int i = 1; i < length; i++) sb.append("  %").append(i).append(" = multiply(%").append(i - 1).append(", 1f);\n");
        sb.append("  %").append(length - 1).append("\n}\n");
        IRModule grad = ReverseMode.gradient(ReverseModeTest.parse(sb.toString()), "main");
        org.junit.jupiter.api.Assertions.assertEquals(2, grad.functions().size());
        // running it unwinds a backpropagator chain as deep as the program is long
        dev.relayfarm.interp.TupleValue r = (dev.relayfarm.interp.TupleValue) dev.relayfarm.interp.Interpreter.run(grad, "main",
                dev.relayfarm.ir.NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT32, new int[] {2}, new double[] {1, 2}));
        dev.relayfarm.ir.NDArray dx = ((dev.relayfarm.interp.TensorValue) ((dev.relayfarm.interp.TupleValue) r.get(1)).get(0)).data();
        org.junit.jupiter.api.Assertions.assertEquals(1.0, dx.getDouble(0));
    }
}
