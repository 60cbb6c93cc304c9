package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import org.junit.jupiter.api.Test;

/**
 * Issue #13: subgraphs nested in subgraphs (an If's then_branch holding another If ...) cannot
 * overflow the stack: protobuf's default recursion limit (100 messages, three per subgraph level)
 * stops the parse, and the reader reports it as a malformed model.
 */
class OnnxNestingTest {
    @Test
    void subgraphsNestedPastProtobufsRecursionLimitAreAFormatError() {
        GraphProto g = GraphProto.newBuilder().setName("leaf").build();
        for (int i = 0; i < 10_000; i++) {
            NodeProto ifNode = NodeProto.newBuilder().setOpType("If").addAttribute(
                    AttributeProto.newBuilder().setName("then_branch").setType(AttributeProto.AttributeType.GRAPH).setG(g)).build();
            g = GraphProto.newBuilder().setName("g" + i).addNode(ifNode).build();
        }
        // protobuf's serializer recurses per message (only its parser is limited): write on a big stack.
        byte[][] bytes = new byte[1][];
        GraphProto top = g;
        Thread t = new Thread(null, () -> bytes[0] = ModelProto.newBuilder().setGraph(top).build().toByteArray(), "serialize", 512L << 20);
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxModels.parse(bytes[0], "deep.onnx"));
        assertTrue(e.getMessage().startsWith("deep.onnx: not a valid ONNX model:"), e.getMessage());
        assertTrue(e.getMessage().contains("too many levels of nesting"), e.getMessage());
    }
}
