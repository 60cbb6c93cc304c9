package dev.relayfarm.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the ONNX reader and importer, then type inference and optimization at a random -O level — what the importer, type-inference and optimizer services do
 * with an uploaded model. Seeds: every node test's {@code model.onnx} and the real models under 1 MB from
 * {@code ../shared/onnx}; each is mutated as a protobuf (op types swapped, attributes, dims and dtypes made
 * extreme, nodes dropped or duplicated, opset versions changed) and as bytes (bit flips, varints, splices).
 * Property: a module or a clean user error. Skips when the ONNX test data is absent.
 *
 * <p>CI runs 2,000 inputs; a campaign: {@code -Dtest=OnnxFuzzTest -Drelayfarm.fuzz.inputs=100000}.
 */
class OnnxFuzzTest {
    private static final long[] EXTREME = {0, -1, -2, 1, 3, 7, 1L << 31, (1L << 31) - 1, 1L << 40, 99_999_999, Long.MAX_VALUE, Long.MIN_VALUE};

    @Test
    void everyModelImportsOrFailsCleanly() throws IOException {
        List<byte[]> seeds = seeds();
        assumeTrue(!seeds.isEmpty(), "no ONNX test data (../shared/onnx or RELAYFARM_ONNX_DIR): ONNX fuzzing skipped");
        List<String> opTypes = opTypes(seeds);
        java.util.concurrent.atomic.AtomicInteger malformedNodes = new java.util.concurrent.atomic.AtomicInteger();
        FuzzCampaign<byte[]> campaign = new FuzzCampaign<>("onnx", rng -> generate(rng, seeds, opTypes), OnnxFuzzTest::importModel, t -> {
            // the importer's catch-all at a node: clean and located, but counted apart so converter gaps stay visible
            if (t instanceof dev.relayfarm.frontend.OnnxFormatException && t.getCause() instanceof RuntimeException) malformedNodes.incrementAndGet();
            return t instanceof CompileError;
        }, new FuzzCampaign.Saver<>("onnx", b -> b));
        FuzzCampaign.Report r = campaign.run(FuzzCampaign.inputs(2_000));
        System.out.println("fuzz onnx: " + malformedNodes + " of the user errors came from the importer's per-node guard (a converter's assumption broken)");
        assertTrue(r.findings().isEmpty(), () -> r.describeFindings(10));
        // (a replay of one input, -Drelayfarm.fuzz.only, is one or the other)
        if (r.inputs() > 1) assertTrue(r.ok() > 0 && r.userErrors() > 0, () -> "the generator must produce both importable and broken models: " + r.line());
    }

    static void importModel(byte[] model) {
        IRModule m = Stages.importModel(ModelSource.of("fuzz.onnx", ModelFormat.ONNX, model), "");
        Stages.optimize(Stages.inferTypes(m), Math.floorMod(model.length, 4));
    }

    static byte[] generate(Random rng, List<byte[]> seeds, List<String> opTypes) {
        byte[] seed = seeds.get(rng.nextInt(seeds.size()));
        Mutator m = new Mutator(rng);
        int way = rng.nextInt(10);
        if (way == 0) return seed; // unmutated: real models must import
        if (way < 7) {
            try {
                ModelProto.Builder b = ModelProto.parseFrom(seed).toBuilder();
                for (int i = 1 + rng.nextInt(3); i > 0; i--) mutateModel(b, rng, opTypes);
                byte[] out = b.build().toByteArray();
                return rng.nextInt(5) == 0 ? m.mutateBytes(out, 1, seeds) : out;
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException("seed is not an ONNX model", e);
            }
        }
        return m.mutateBytes(seed, 1 + rng.nextInt(4), seeds);
    }

    /** One structural change, of the kinds a buggy exporter or a hostile user produces. */
    private static void mutateModel(ModelProto.Builder model, Random rng, List<String> opTypes) {
        GraphProto.Builder g = model.getGraphBuilder();
        switch (rng.nextInt(9)) {
            case 0 -> { // another op type under the same inputs and attributes
                if (g.getNodeCount() > 0) g.getNodeBuilder(rng.nextInt(g.getNodeCount())).setOpType(opTypes.get(rng.nextInt(opTypes.size())));
            }
            case 1 -> { // an attribute made extreme
                if (g.getNodeCount() > 0) {
                    NodeProto.Builder n = g.getNodeBuilder(rng.nextInt(g.getNodeCount()));
                    if (n.getAttributeCount() > 0) {
                        AttributeProto.Builder a = n.getAttributeBuilder(rng.nextInt(n.getAttributeCount()));
                        long v = EXTREME[rng.nextInt(EXTREME.length)];
                        if (a.getIntsCount() > 0) a.setInts(rng.nextInt(a.getIntsCount()), v);
                        else if (a.hasI()) a.setI(v);
                        else if (a.hasF()) a.setF(rng.nextBoolean() ? Float.NaN : (float) v);
                        else if (a.getFloatsCount() > 0) a.setFloats(rng.nextInt(a.getFloatsCount()), Float.POSITIVE_INFINITY);
                        else a.setType(AttributeProto.AttributeType.forNumber(1 + rng.nextInt(10)) == null ? AttributeProto.AttributeType.INT
                                : AttributeProto.AttributeType.forNumber(1 + rng.nextInt(10)));
                    }
                }
            }
            case 2 -> { // a graph input's dim made extreme or symbolic
                if (g.getInputCount() > 0) {
                    ValueInfoProto.Builder in = g.getInputBuilder(rng.nextInt(g.getInputCount()));
                    if (in.hasType() && in.getType().hasTensorType() && in.getType().getTensorType().hasShape()) {
                        TensorShapeProto.Builder s = in.getTypeBuilder().getTensorTypeBuilder().getShapeBuilder();
                        if (s.getDimCount() > 0) {
                            TensorShapeProto.Dimension.Builder d = s.getDimBuilder(rng.nextInt(s.getDimCount()));
                            if (rng.nextInt(4) == 0) d.setDimParam("n");
                            else d.setDimValue(EXTREME[rng.nextInt(EXTREME.length)]);
                        } else {
                            s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(EXTREME[rng.nextInt(EXTREME.length)]));
                        }
                    }
                }
            }
            case 3 -> { // an element type changed
                if (g.getInputCount() > 0) {
                    ValueInfoProto.Builder in = g.getInputBuilder(rng.nextInt(g.getInputCount()));
                    if (in.hasType() && in.getType().hasTensorType()) in.getTypeBuilder().getTensorTypeBuilder().setElemType(rng.nextInt(24));
                }
            }
            case 4 -> { // an initializer's dims no longer match its data
                if (g.getInitializerCount() > 0) {
                    TensorProto.Builder t = g.getInitializerBuilder(rng.nextInt(g.getInitializerCount()));
                    if (t.getDimsCount() > 0) t.setDims(rng.nextInt(t.getDimsCount()), EXTREME[rng.nextInt(EXTREME.length)]);
                    else t.addDims(EXTREME[rng.nextInt(EXTREME.length)]);
                }
            }
            case 5 -> { // a node dropped (its outputs dangle)
                if (g.getNodeCount() > 0) g.removeNode(rng.nextInt(g.getNodeCount()));
            }
            case 6 -> { // a node duplicated (outputs defined twice) or an input rewired
                if (g.getNodeCount() > 0) {
                    NodeProto n = g.getNode(rng.nextInt(g.getNodeCount()));
                    if (rng.nextBoolean()) g.addNode(n);
                    else if (n.getInputCount() > 0) {
                        NodeProto.Builder nb = g.getNodeBuilder(rng.nextInt(g.getNodeCount()));
                        if (nb.getInputCount() > 0) nb.setInput(rng.nextInt(nb.getInputCount()), rng.nextInt(5) == 0 ? "" : n.getInput(0));
                    }
                }
            }
            case 7 -> { // opset version changed
                if (model.getOpsetImportCount() > 0) model.getOpsetImportBuilder(0).setVersion(rng.nextInt(30) - 1);
            }
            default -> { // an input or an output removed
                if (rng.nextBoolean() && g.getInputCount() > 0) g.removeInput(rng.nextInt(g.getInputCount()));
                else if (g.getOutputCount() > 0) g.removeOutput(rng.nextInt(g.getOutputCount()));
            }
        }
    }

    private static List<byte[]> seeds() throws IOException {
        List<byte[]> out = new ArrayList<>();
        Optional<Path> node = OnnxTestData.nodeTests();
        if (node.isPresent()) {
            try (Stream<Path> dirs = Files.list(node.get())) {
                for (Path d : dirs.sorted().toList()) {
                    Path f = d.resolve("model.onnx");
                    if (Files.isRegularFile(f)) out.add(Files.readAllBytes(f));
                }
            }
        }
        Optional<Path> models = OnnxTestData.models();
        if (models.isPresent()) {
            try (Stream<Path> dirs = Files.list(models.get())) {
                for (Path d : dirs.sorted().toList()) {
                    Path f = d.resolve("model.onnx");
                    if (Files.isRegularFile(f) && Files.size(f) < 1 << 20) out.add(Files.readAllBytes(f));
                }
            }
        }
        return out;
    }

    private static List<String> opTypes(List<byte[]> seeds) throws InvalidProtocolBufferException {
        java.util.TreeSet<String> ops = new java.util.TreeSet<>();
        for (byte[] s : seeds) for (NodeProto n : ModelProto.parseFrom(s).getGraph().getNodeList()) ops.add(n.getOpType());
        return List.copyOf(ops);
    }
}
