package dev.relayfarm.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.gen.RandomModules;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.text.RelayParseException;
import dev.relayfarm.text.RelayPrinter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the farm's first three stages on Relay text — import (the parser), infer types, optimize at a random
 * -O level — as the importer, type-inference and optimizer services run them on an upload. Inputs: generated
 * programs (random modules of every node kind, printed), the examples, and token soup, each mutated by text
 * and byte mutations, including nestings up to 100k deep. Property: a result or a clean user error; a parse
 * error names {@code fuzz.relay:line:col}.
 *
 * <p>CI runs 2,000 inputs; a campaign: {@code ./mvnw -pl shared-ir test -Dtest=RelayTextFuzzTest -Drelayfarm.fuzz.inputs=100000}.
 */
class RelayTextFuzzTest {
    static final List<String> DICTIONARY = List.of(
            "#[version = \"0.0.5\"]\n", "def", "@main", "@f", "fn", "let", "%x", "%y", "%0", "%1", "=", ";", ",", ":", "->", "(", ")", "{", "}", "[", "]",
            "if", "else", "match", "match?", "ref", "ref_read", "ref_write", "type", "List", "Cons", "Nil", "_", "=>", "|", ".0", ".1",
            "Tensor[(1, 3), float32]", "Tensor[(?, 3), int64]", "Tensor[(), bool]", "float32", "int8", "uint64", "float16", "(Tensor[(1), float32], )",
            "add", "nn.conv2d", "nn.dense", "reshape", "zeros", "ones", "concatenate", "split", "take", "strided_slice", "nn.softmax",
            "newshape=[-1, 0]", "axis=-5", "shape=[99999999, 99999999]", "dtype=\"int32\"", "meta[relay.Constant][0]", "/* c */", "// c\n",
            "\"str\"", "1f", "0", "-1", "True", "False", "\u0000", "\uFEFF", "\uD800", "é", "\n", " ", "\t");

    @Test
    void everyInputParsesOrFailsCleanly() throws IOException {
        List<String> examples = examples();
        FuzzCampaign<byte[]> campaign = new FuzzCampaign<>("relay-text", rng -> generate(rng, examples), RelayTextFuzzTest::compile,
                RelayTextFuzzTest::isCleanError, new FuzzCampaign.Saver<>("relay", b -> b));
        FuzzCampaign.Report r = campaign.run(FuzzCampaign.inputs(2_000));
        assertTrue(r.findings().isEmpty(), () -> r.describeFindings(10));
        // (a replay of one input, -Drelayfarm.fuzz.only, is one or the other)
        if (r.inputs() > 1) assertTrue(r.ok() > 0 && r.userErrors() > 0, () -> "the generator must produce both valid and invalid programs: " + r.line());
    }

    /** What the importer, type-inference and optimizer services do with an uploaded Relay model. */
    static void compile(byte[] source) {
        IRModule m = Stages.importModel(ModelSource.of("fuzz.relay", ModelFormat.RELAY, source), "");
        IRModule typed = Stages.inferTypes(m);
        Stages.optimize(typed, Math.floorMod(source.length, 4));
    }

    static boolean isCleanError(Throwable t) {
        if (t instanceof RelayParseException p) return p.file().equals("fuzz.relay") && p.line() >= 1 && p.column() >= 1;
        return t instanceof CompileError;
    }

    static byte[] generate(Random rng, List<String> examples) {
        Mutator m = new Mutator(rng);
        int kind = rng.nextInt(10);
        String text;
        if (kind < 6) {
            text = RelayPrinter.print(RandomModules.module(rng.nextLong()));
        } else if (kind < 8 && !examples.isEmpty()) {
            text = examples.get(rng.nextInt(examples.size()));
        } else {
            StringBuilder soup = new StringBuilder();
            for (int i = rng.nextInt(200); i > 0; i--) soup.append(DICTIONARY.get(rng.nextInt(DICTIONARY.size()))).append(rng.nextBoolean() ? " " : "");
            text = soup.toString();
        }
        // about one input in ten is left as generated: valid programs must also get through every stage
        String mutated = rng.nextInt(10) == 0 ? text : m.mutateText(text, 1 + rng.nextInt(5), DICTIONARY);
        byte[] bytes = Mutator.utf8(mutated);
        return rng.nextInt(8) == 0 ? m.mutateBytes(bytes, 1 + rng.nextInt(3), List.of()) : bytes;
    }

    private static List<String> examples() throws IOException {
        Path dir = Path.of("../examples");
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) return out;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(p -> p.toString().endsWith(".relay")).sorted().toList()) out.add(Files.readString(p));
        }
        return out;
    }
}
