package dev.relayfarm.passes;

import static dev.relayfarm.passes.MetaText.spread;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The host's vectors are 8 lanes or more, so groups of 14 channels are padded to 16. */
class PadChannelGroupsTest {
    private static final String PAD = "pad-channel-groups";

    /** One ShuffleNet unit on {@code in} (2 groups of 14 channels), its result {@code %out}; constants from {@code k}. */
    private static String unit(String in, String out, int k) {
        return """
                  %IN_1 = nn.conv2d(IN, meta[relay.Constant][K0], groups=2, channels=28, kernel_size=[1, 1]);
                  %IN_2 = nn.relu(add(%IN_1, meta[relay.Constant][K1]));
                  %IN_3 = reshape(transpose(reshape(%IN_2, newshape=[1, 2, 14, 4, 4]), axes=[0, 2, 1, 3, 4]), newshape=[1, 28, 4, 4]);
                  %IN_4 = nn.conv2d(%IN_3, meta[relay.Constant][K2], padding=[1, 1, 1, 1], groups=28, channels=28, kernel_size=[3, 3]);
                  %IN_5 = add(%IN_4, meta[relay.Constant][K3]);
                  %IN_6 = nn.conv2d(%IN_5, meta[relay.Constant][K4], groups=2, channels=28, kernel_size=[1, 1]);
                  %IN_7 = add(%IN_6, meta[relay.Constant][K5]);
                  %OUT = nn.relu(add(%IN_7, IN));
                """.replace("%IN_", "%" + out.substring(1) + "_").replace("IN", in).replace("%OUT", out)
                .replace("K0", "" + k).replace("K1", "" + (k + 1)).replace("K2", "" + (k + 2)).replace("K3", "" + (k + 3))
                .replace("K4", "" + (k + 4)).replace("K5", "" + (k + 5));
    }

    private static String twoUnits() {
        return "def @main(%x: Tensor[(1, 28, 4, 4), float32]) {\n" + unit("%x", "%r", 0) + unit("%r", "%s", 6) + "  %s\n}\n"
                + MetaText.of(spread(1, 28, 14, 1, 1), spread(2, 28, 1, 1), spread(3, 28, 1, 3, 3), spread(4, 28, 1, 1), spread(5, 28, 14, 1, 1),
                        spread(6, 28, 1, 1), spread(7, 28, 14, 1, 1), spread(8, 28, 1, 1), spread(9, 28, 1, 3, 3), spread(10, 28, 1, 1),
                        spread(11, 28, 14, 1, 1), spread(12, 28, 1, 1));
    }

    private static List<Call> calls(IRModule m, String op) {
        return ExprTraversal.postOrder(m.main().orElseThrow().body()).stream()
                .filter(e -> e instanceof Call c && c.callee() instanceof Op o && o.name().equals(op)).map(e -> (Call) e).toList();
    }

    @Test
    void shuffleUnitsRunInPaddedChannelsFromTheStageInputToItsOutput() {
        IRModule in = dev.relayfarm.types.TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule("#[version = \"0.0.5\"]\n" + twoUnits(), "input")).module();
        IRModule out = PassAssert.run(PAD + ",fold-constant", in).module();
        // the interpreter sums the padded convolutions' terms in another order: a few ulps through two units
        for (long seed = 1; seed <= 3; seed++) SameResults.assertSameResults(in, out, seed, new dev.relayfarm.interp.Tolerance(1e-4, 1e-4));
        for (Call conv : calls(out, "nn.conv2d")) {
            assertEquals(AttrValue.of(32), conv.attrs().get("channels").orElseThrow(), "every convolution on 2 x 16 channels: " + conv);
        }
        // copies into padded channels: the stage input and each shuffle (which fuses into the depthwise convolution
        // after it); out of them: each shuffle's input (after the bias and relu, which stay padded) and the stage output
        String text = dev.relayfarm.text.RelayPrinter.print(out);
        assertEquals(3, calls(out, "nn.pad").size(), text);
        assertEquals(3, calls(out, "strided_slice").size(), text);
        // each unit's 3 biases and residual once: nothing is computed both padded and not
        assertEquals(8, calls(out, "add").size(), text);
    }

    @Test
    void poolingAfterAPaddedConvolutionRunsPaddedAndIsUnpaddedOnce() {
        String text = """
                def @main(%x: Tensor[(1, 28, 4, 4), float32], %w: Tensor[(28, 14, 1, 1), float32]) {
                  %0 = nn.relu(nn.conv2d(%x, %w, groups=2, channels=28, kernel_size=[1, 1]));
                  nn.avg_pool2d(%0, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], count_include_pad=False)
                }
                """;
        IRModule in = dev.relayfarm.types.TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule("#[version = \"0.0.5\"]\n" + text, "input")).module();
        IRModule out = PassAssert.run(PAD, in).module();
        for (long seed = 1; seed <= 3; seed++) SameResults.assertSameResults(in, out, seed, new dev.relayfarm.interp.Tolerance(1e-4, 1e-4));
        List<Call> slices = calls(out, "strided_slice");
        assertEquals(1, slices.size(), dev.relayfarm.text.RelayPrinter.print(out));
        Expr sliced = ((Call) slices.getFirst().args().getFirst()).args().getFirst();
        assertEquals("nn.avg_pool2d", ((Op) ((Call) sliced).callee()).name(), "the pooling runs on the padded channels: " + dev.relayfarm.text.RelayPrinter.print(out));
    }

    @Test
    void groupsOfWholeVectorsAndGroupsThatWouldCostTooMuchAreLeftAlone() {
        assertUnchanged(PAD, """
                def @main(%x: Tensor[(1, 32, 4, 4), float32], %w: Tensor[(32, 16, 1, 1), float32]) {
                  nn.conv2d(%x, %w, groups=2, channels=32, kernel_size=[1, 1])
                }
                """);
        // 6 channels a group padded to 8: 1.78 times the work
        assertUnchanged(PAD, """
                def @main(%x: Tensor[(1, 12, 4, 4), float32], %w: Tensor[(12, 6, 1, 1), float32]) {
                  nn.conv2d(%x, %w, groups=2, channels=12, kernel_size=[1, 1])
                }
                """);
    }
}
