package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class FuseOpsTest {
    private static final String FUSE = "fuse-ops";

    @Test
    void convBiasReluIsOneGroup() {
        String before = """
                def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
                  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
                  %1 = nn.bias_add(%0, %b);
                  nn.relu(%1)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
                  %3 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(4), float32], Primitive=1) {
                    %0 = nn.conv2d(%p0, %p1, padding=[1, 1]);
                    %1 = nn.bias_add(%0, %p2);
                    nn.relu(%1)
                  };
                  %3(%x, %w, %b)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void diamondFusesWhenEverySideIsFusable() {
        String before = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = add(%x, 1f);
                  %1 = exp(%0);
                  %2 = log(%0);
                  add(%1, %2)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %4 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) {
                    %0 = add(%p0, 1f);
                    %1 = exp(%0);
                    %2 = log(%0);
                    add(%1, %2)
                  };
                  %4(%x)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void diamondWithAnOpaqueSideDoesNotFuseAcrossIt() {
        // softmax on one side: the add at the top cannot reach its post-dominator over fusable ops.
        String before = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = add(%x, 1f);
                  %1 = exp(%0);
                  %2 = nn.softmax(%0);
                  add(%1, %2)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { add(%p0, 1f) };
                  %1 = %0(%x);
                  %2 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { nn.softmax(%p0) };
                  %3 = %2(%1);
                  %4 = fn (%p0: Tensor[(4, 5), float32], %p1: Tensor[(4, 5), float32], Primitive=1) { add(exp(%p0), %p1) };
                  %4(%1, %3)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void valueWithConsumersInTwoGroupsIsNotFusedIntoEither() {
        // The conv result feeds a relu and a softmax (opaque): it cannot be inlined into both, so the
        // conv group ends at the conv, and relu and softmax are groups of their own.
        String before = """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %w);
                  %1 = nn.relu(%0);
                  %2 = nn.softmax(%0);
                  (%1, %2)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32], Primitive=1) { nn.conv2d(%p0, %p1) };
                  %1 = %0(%x, %w);
                  %2 = fn (%p0: Tensor[(1, 2, 4, 4), float32], Primitive=1) { nn.relu(%p0) };
                  %3 = fn (%p0: Tensor[(1, 2, 4, 4), float32], Primitive=1) { nn.softmax(%p0) };
                  (%2(%1), %3(%1))
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void twoAnchorsDoNotFuseWithEachOther() {
        String before = """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %w);
                  %1 = nn.relu(%0);
                  nn.conv2d(%1, %w)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32], Primitive=1) { nn.relu(nn.conv2d(%p0, %p1)) };
                  %1 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32], Primitive=1) { nn.conv2d(%p0, %p1) };
                  %1(%0(%x, %w), %w)
                }
                """);
    }

    @Test
    void elementwiseFusesIntoReduction() {
        // exp -> sum -> multiply: the exp joins the reduction; a reduction never joins its consumer
        // (TVM's rule), so the element-wise op after it starts a group of its own.
        String before = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = exp(%x);
                  %1 = sum(%0, axis=[1]);
                  multiply(%1, 2f)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { sum(exp(%p0), axis=[1]) };
                  %1 = fn (%p0: Tensor[(4), float32], Primitive=1) { multiply(%p0, 2f) };
                  %1(%0(%x))
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void injectiveChainIsOneGroup() {
        String before = """
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  %0 = transpose(%x, axes=[0, 2, 1]);
                  %1 = reshape(%0, newshape=[8, 3]);
                  %2 = negative(%1);
                  reshape(%2, newshape=[24])
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  %0 = fn (%p0: Tensor[(2, 3, 4), float32], Primitive=1) {
                    reshape(negative(reshape(transpose(%p0, axes=[0, 2, 1]), newshape=[8, 3])), newshape=[24])
                  };
                  %0(%x)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void concatenateTakesItsInjectiveInputs() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {
                  %0 = exp(%x);
                  %1 = transpose(%y);
                  %2 = (%0, %1);
                  %3 = concatenate(%2, axis=0);
                  nn.relu(%3)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {
                  %0 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(3, 2), float32], Primitive=1) {
                    nn.relu(concatenate((exp(%p0), transpose(%p1)), axis=0))
                  };
                  %0(%x, %y)
                }
                """);
        assertSameResults(FUSE, before);
    }

    /** ShuffleNet's channel shuffle between layout transforms, then a depthwise convolution; {@code PADDING} is substituted. */
    private static final String SHUFFLE_THEN_DEPTHWISE = """
            def @main(%x: Tensor[(1, 2, 4, 4, 4), float32], %w: Tensor[(2, 1, 3, 3, 1, 4), float32]) {
              %0 = layout_transform(%x, src_layout="NCHW4c", dst_layout="NCHW");
              %1 = reshape(%0, newshape=[1, 2, 4, 4, 4]);
              %2 = transpose(%1, axes=[0, 2, 1, 3, 4]);
              %3 = reshape(%2, newshape=[1, 8, 4, 4]);
              %4 = layout_transform(%3, src_layout="NCHW", dst_layout="NCHW4c");
              nn.contrib_conv2d_NCHWc(%4, %w, padding=PADDING, groups=8, channels=8, kernel_size=[3, 3], data_layout="NCHW4c", kernel_layout="OIHW1i4o", out_layout="NCHW4c")
            }
            """;

    @Test
    void paddedDepthwiseConvolutionTakesItsInjectiveProducer() {
        String before = SHUFFLE_THEN_DEPTHWISE.replace("PADDING", "[1, 1, 1, 1]");
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(1, 2, 4, 4, 4), float32], %w: Tensor[(2, 1, 3, 3, 1, 4), float32]) {
                  %0 = fn (%p0: Tensor[(1, 2, 4, 4, 4), float32], %p1: Tensor[(2, 1, 3, 3, 1, 4), float32], Primitive=1) {
                    %1 = layout_transform(%p0, src_layout="NCHW4c", dst_layout="NCHW");
                    %2 = reshape(%1, newshape=[1, 2, 4, 4, 4]);
                    %3 = transpose(%2, axes=[0, 2, 1, 3, 4]);
                    %4 = reshape(%3, newshape=[1, 8, 4, 4]);
                    %5 = layout_transform(%4, src_layout="NCHW", dst_layout="NCHW4c");
                    nn.contrib_conv2d_NCHWc(%5, %p1, padding=[1, 1, 1, 1], groups=8, channels=8, kernel_size=[3, 3], data_layout="NCHW4c", kernel_layout="OIHW1i4o", out_layout="NCHW4c")
                  };
                  %0(%x, %w)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void unpaddedDepthwiseConvolutionLeavesItsInjectiveProducerApart() {
        String before = SHUFFLE_THEN_DEPTHWISE.replace("PADDING", "[0, 0, 0, 0]");
        IRModule fused = PassAssert.run(FUSE, before).module();
        Function main = fused.main().orElseThrow();
        assertTrue(main.body() instanceof Call conv && conv.callee() instanceof Function f && f.isPrimitive()
                && conv.args().getFirst() instanceof Call shuffle && shuffle.callee() instanceof Function g && g.isPrimitive(),
                "the shuffle stays a kernel of its own: " + main);
    }

    @Test
    void opaqueOpIsAGroupOfOne() {
        String before = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = exp(%x);
                  %1 = nn.softmax(%0);
                  negative(%1)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { exp(%p0) };
                  %1 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { nn.softmax(%p0) };
                  %2 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { negative(%p0) };
                  %2(%1(%0(%x)))
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void tupleOutputOfTwoGroupsIsNotWrapped() {
        String before = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = exp(%x);
                  %1 = sum(%x, axis=[0]);
                  (%0, %1)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { exp(%p0) };
                  %1 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { sum(%p0, axis=[0]) };
                  (%0(%x), %1(%x))
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void splitAndItsProjectionsFuseWithTheirConsumer() {
        String before = """
                def @main(%x: Tensor[(4, 6), float32]) {
                  %0 = split(%x, indices_or_sections=2, axis=1);
                  %1 = %0.0;
                  %2 = %0.1;
                  add(%1, %2)
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4, 6), float32]) {
                  %3 = fn (%p0: Tensor[(4, 6), float32], Primitive=1) {
                    %0 = split(%p0, indices_or_sections=2, axis=1);
                    add(%0.0, %0.1)
                  };
                  %3(%x)
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void tensorConstantsArePassedInScalarsStayInside() {
        // add(%x, <tensor constant>) then multiply by a scalar literal.
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 3));
        Constant weights = new Constant(NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {1, 2, 3}));
        Constant three = new Constant(NDArray.scalar(3f));
        Function main = new Function(List.of(x), Call.op("multiply", Call.op("add", x, weights), three));
        IRModule in = TypeInference.infer(IRModule.fromMain(main)).module();
        IRModule out = PassAssert.run(FUSE, in).module();
        Call site = (Call) out.main().orElseThrow().body();
        Function group = (Function) site.callee();
        assertTrue(group.isPrimitive());
        assertEquals(List.of(x, weights), site.args(), "the tensor constant is an argument of the group");
        Call multiply = (Call) group.body();
        assertSame(three, multiply.args().get(1), "the scalar constant stays inside the group");
        assertEquals(new FusionStats(1, 2, 2, 0), FusionStats.of(out));
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }

    @Test
    void letIfAndNestedFunctionsAreBoundaries() {
        String before = """
                def @main(%x: Tensor[(4), float32], %c: bool) {
                  let %a = exp(%x);
                  let %b = negative(%a);
                  let %f = fn (%y: Tensor[(4), float32]) { nn.relu(add(%y, %b)) };
                  if (%c) { %f(log(%b)) } else { abs(%b) }
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4), float32], %c: bool) {
                  let %a = fn (%p0: Tensor[(4), float32], Primitive=1) { exp(%p0) }(%x);
                  let %b = fn (%p0: Tensor[(4), float32], Primitive=1) { negative(%p0) }(%a);
                  let %f = fn (%y: Tensor[(4), float32]) {
                    fn (%p0: Tensor[(4), float32], %p1: Tensor[(4), float32], Primitive=1) { nn.relu(add(%p0, %p1)) }(%y, %b)
                  };
                  if (%c) {
                    %f(fn (%p0: Tensor[(4), float32], Primitive=1) { log(%p0) }(%b))
                  } else {
                    fn (%p0: Tensor[(4), float32], Primitive=1) { abs(%p0) }(%b)
                  }
                }
                """);
        assertSameResults(FUSE, before);
    }

    @Test
    void sharedValueUsedInsideABranchIsNotMovedIntoIt() {
        String before = """
                def @main(%x: Tensor[(4), float32], %c: bool) {
                  %0 = exp(%x);
                  if (%c) { negative(%0) } else { %0 }
                }
                """;
        assertRewrites(FUSE, before, """
                def @main(%x: Tensor[(4), float32], %c: bool) {
                  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) { exp(%p0) }(%x);
                  if (%c) { fn (%p0: Tensor[(4), float32], Primitive=1) { negative(%p0) }(%0) } else { %0 }
                }
                """);
    }

    @Test
    void secondRunChangesNothing() {
        String fused = """
                def @main(%x: Tensor[(4, 5), float32]) {
                  %0 = fn (%p0: Tensor[(4, 5), float32], Primitive=1) { exp(%p0) };
                  (%0(%x), %x)
                }
                """;
        assertUnchanged(FUSE, fused);
        assertUnchanged(FUSE, """
                def @main(%x: Tensor[(4, 5), float32]) { (%x, %x) }
                """);
    }

    @Test
    void maxDepthSplitsLongChains() {
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(3), float32]) {\n  %0 = exp(%x);\n");
        for (int i = 1; i < 10; i++) sb.append("  %").append(i).append(" = negative(%").append(i - 1).append(");\n");
        sb.append("  %9\n}\n");
        IRModule in = dev.relayfarm.types.TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule(
                "#[version = \"0.0.5\"]\n" + sb, "input")).module();
        PassContext ctx = new PassContext(PassOptions.level(1).withValidate(true));
        IRModule out = new Sequential("t", java.util.List.of(new FuseOps(new FuseOps.Options(4)))).run(in, ctx).module();
        FusionStats s = FusionStats.of(out);
        assertEquals(new FusionStats(3, 10, 4, 0), s, dev.relayfarm.text.RelayPrinter.print(out));
        IRModule whole = PassAssert.run(FUSE, in).module();
        assertEquals(new FusionStats(1, 10, 10, 0), FusionStats.of(whole));
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }

    @Test
    void hundredThousandNodeChainSplitsAtMaxDepth() {
        // A 100,000-deep dataflow chain: no recursion per node anywhere, groups of exactly 256.
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        Expr e = x;
        for (int i = 0; i < 100_000; i++) e = Call.op(i % 2 == 0 ? "negative" : "abs", e);
        IRModule in = TypeInference.infer(IRModule.fromMain(new Function(List.of(x), e))).module();
        long t0 = System.nanoTime();
        IRModule out = PassAssert.run(FUSE, in).module();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(new FusionStats(391, 100_000, 256, 0), FusionStats.of(out), "100000 = 390 * 256 + 160");
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
        System.out.printf("fuse-ops 100k-node dataflow chain: %d ms (with re-typing and validation)%n", ms);
    }

    @Test
    void hundredThousandLetChainGivesOneGroupPerBinding() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        List<Var> vars = new java.util.ArrayList<>();
        Var prev = x;
        for (int i = 0; i < 100_000; i++) {
            Var v = Var.fresh("v" + i);
            vars.add(v);
            prev = v;
        }
        Expr body = prev;
        for (int i = vars.size() - 1; i >= 0; i--) {
            Expr input = i == 0 ? x : vars.get(i - 1);
            body = new dev.relayfarm.ir.Let(vars.get(i), Call.op("negative", input), body);
        }
        IRModule in = TypeInference.infer(IRModule.fromMain(new Function(List.of(x), body))).module();
        // Without the debug validation: 700,000 nodes out, the check alone would double the time.
        IRModule out = new Sequential("t", List.of(new FuseOps())).run(in, new PassContext(PassOptions.level(1))).module();
        assertEquals(new FusionStats(100_000, 100_000, 1, 0), FusionStats.of(out));
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }
}
