package dev.relayfarm.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.gen.RandomModules;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.serde.BlobSource;
import dev.relayfarm.serde.BlobStoreException;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.serde.IrJsonException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the JSON IR reader the way a stage service reads the IR between stages, then type inference: IR
 * documents written from generated modules, mutated as JSON trees (a value of another type, a deleted or
 * duplicated member, extreme numbers, op and dtype names swapped, deep nesting) and as bytes. Property: a
 * module or a clean error ({@link IrJsonException} naming the JSON path, a blob error, a user error).
 *
 * <p>CI runs 2,000 inputs; a campaign: {@code -Dtest=IrJsonFuzzTest -Drelayfarm.fuzz.inputs=100000}.
 */
class IrJsonFuzzTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    @Test
    void everyDocumentReadsOrFailsCleanly() {
        FuzzCampaign<byte[]> campaign = new FuzzCampaign<>("ir-json", IrJsonFuzzTest::generate, IrJsonFuzzTest::read, IrJsonFuzzTest::isCleanError,
                new FuzzCampaign.Saver<>("json", b -> b));
        FuzzCampaign.Report r = campaign.run(FuzzCampaign.inputs(2_000));
        assertTrue(r.findings().isEmpty(), () -> r.describeFindings(10));
        // (a replay of one input, -Drelayfarm.fuzz.only, is one or the other)
        if (r.inputs() > 1) assertTrue(r.ok() > 0 && r.userErrors() > 0, () -> "the generator must produce both readable and broken documents: " + r.line());
    }

    static void read(byte[] json) {
        IRModule m = IrJson.read(new String(json, StandardCharsets.UTF_8), BlobSource.NONE);
        Stages.inferTypes(m);
    }

    static boolean isCleanError(Throwable t) {
        if (t instanceof IrJsonException e) return e.getMessage() != null && e.getMessage().contains("$");
        return t instanceof BlobStoreException || t instanceof CompileError;
    }

    static byte[] generate(Random rng) {
        Mutator m = new Mutator(rng);
        JsonNode original = IrJson.writeTree(RandomModules.module(rng.nextLong()), dev.relayfarm.serde.BlobSink.NONE, IrJson.Options.INLINE_ALL);
        JsonNode doc = original.deepCopy();
        int rounds = rng.nextInt(10) == 0 ? 0 : 1 + rng.nextInt(4);
        for (int i = 0; i < rounds; i++) doc = mutateTree(doc, rng);
        byte[] bytes;
        try {
            bytes = MAPPER.writeValueAsBytes(doc);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            // nested past the writer's limit by several deep mutations: the text-level one below still makes deep documents
            bytes = original.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (rng.nextInt(30) == 0) bytes = deepText(rng, bytes);
        return rng.nextInt(6) == 0 ? m.mutateBytes(bytes, 1 + rng.nextInt(3), List.of()) : bytes;
    }

    /** One structural mutation at a random node of the tree (the root is replaced only by the deep-nesting one). */
    private static JsonNode mutateTree(JsonNode root, Random rng) {
        List<JsonNode> containers = new ArrayList<>();
        List<JsonNode> stack = new ArrayList<>(List.of(root));
        while (!stack.isEmpty()) {
            JsonNode n = stack.removeLast();
            if (n.isContainerNode()) {
                containers.add(n);
                n.forEach(stack::add);
            }
        }
        if (rng.nextInt(40) == 0) return deep(rng, root);
        JsonNode parent = containers.get(rng.nextInt(containers.size()));
        if (parent.isEmpty()) return root;
        if (parent instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) names.add(it.next().getKey());
            String name = names.get(rng.nextInt(names.size()));
            switch (rng.nextInt(3)) {
                case 0 -> o.remove(name);
                case 1 -> o.set(name, randomValue(rng, o.get(name)));
                default -> o.set(names.get(rng.nextInt(names.size())), o.get(name).deepCopy());
            }
        } else if (parent instanceof ArrayNode a) {
            int i = rng.nextInt(a.size());
            switch (rng.nextInt(3)) {
                case 0 -> a.remove(i);
                case 1 -> a.set(i, randomValue(rng, a.get(i)));
                default -> a.insert(rng.nextInt(a.size() + 1), a.get(i).deepCopy());
            }
        }
        return root;
    }

    private static JsonNode randomValue(Random rng, JsonNode old) {
        return switch (rng.nextInt(12)) {
            case 0 -> NODES.nullNode();
            case 1 -> NODES.numberNode(new long[] {0, -1, 1, Integer.MAX_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, 99_999_999_999L}[rng.nextInt(7)]);
            case 2 -> NODES.numberNode(new double[] {0.5, -0.0, 1e308, Double.MIN_VALUE, 3.4e38}[rng.nextInt(5)]);
            case 3 -> NODES.textNode(RelayTextFuzzTest.DICTIONARY.get(rng.nextInt(RelayTextFuzzTest.DICTIONARY.size())));
            case 4 -> NODES.booleanNode(rng.nextBoolean());
            case 5 -> NODES.arrayNode();
            case 6 -> NODES.objectNode();
            case 7 -> old.isNumber() ? NODES.numberNode(old.asLong() + (rng.nextBoolean() ? 1 : -1)) : NODES.numberNode(rng.nextInt(100));
            case 8 -> NODES.textNode(new String[] {"float32", "int64", "bool", "float16", "int4", "handle", "", "x".repeat(100)}[rng.nextInt(8)]);
            case 9 -> NODES.textNode(new String[] {"Var", "Call", "Let", "Function", "If", "Tuple", "Match", "Constant", "GlobalVar", "Op"}[rng.nextInt(10)]);
            case 10 -> old.deepCopy();
            default -> deep(rng, old);
        };
    }

    /** {@code old} wrapped in arrays or objects up to 990 deep (the writer's limit; {@link #deepText} goes further). */
    private static JsonNode deep(Random rng, JsonNode old) {
        int depth = (int) Math.pow(10, rng.nextDouble() * 2.99);
        JsonNode n = old.deepCopy();
        boolean arrays = rng.nextBoolean();
        for (int i = 0; i < depth; i++) n = arrays ? NODES.arrayNode().add(n) : NODES.objectNode().set("body", n);
        return n;
    }

    /** Up to 100k levels of {@code [} or <code>{"a":</code> opened (and mostly closed) somewhere in the text. */
    private static byte[] deepText(Random rng, byte[] json) {
        int depth = (int) Math.pow(10, rng.nextDouble() * 5);
        boolean arrays = rng.nextBoolean();
        String open = (arrays ? "[" : "{\"a\":").repeat(depth);
        String close = rng.nextInt(4) == 0 ? "" : (arrays ? "]" : "}").repeat(depth);
        String text = new String(json, StandardCharsets.UTF_8);
        int at = rng.nextInt(text.length() + 1);
        return (text.substring(0, at) + open + "1" + close + text.substring(at)).getBytes(StandardCharsets.UTF_8);
    }
}
