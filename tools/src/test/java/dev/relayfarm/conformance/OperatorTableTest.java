package dev.relayfarm.conformance;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxConverters;
import dev.relayfarm.frontend.OnnxTestData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The generated operator table: its counts from real node tests and given results, and the README's
 * copy listing exactly the operators the importer converts (a converter added or removed without
 * rerunning {@code relayc ops --update README.md} fails here).
 */
class OperatorTableTest {
    private static final Path README = Path.of("..", "README.md");

    @Test
    void readmeListsExactlyTheConvertedOperators() throws IOException {
        String readme = Files.readString(README);
        assertEquals(new TreeSet<>(OnnxConverters.supported()), OperatorTable.listedOps(readme),
                "README's operator table is stale: run ./relayc ops ../shared/onnx/node --update README.md");
    }

    @Test
    void countsTestsPerOperatorFromTheirGraphsIncludingSubgraphs() {
        var node = OnnxTestData.nodeTests();
        assumeTrue(node.isPresent() && !node.get().equals(OnnxTestData.DEBIAN_NODE_TESTS), "../shared/onnx/node not found: skipped");
        Path abs = node.get().resolve("test_abs");
        Path iff = node.get().resolve("test_if");
        assumeTrue(Files.isDirectory(abs) && Files.isDirectory(iff), "test_abs/test_if not in the suite: skipped");

        // test_if's branches are subgraphs holding Constant nodes: they count as operators of the test
        assertEquals(Set.of("If", "Constant"), OperatorTable.usage(iff).ops().keySet());

        Conformance.Summary interp = new Conformance.Summary(List.of(pass("test_abs"), pass("test_if")));
        Conformance.Summary compiled = new Conformance.Summary(List.of(pass("test_abs"),
                new OnnxCheck.Result("test_if", OnnxCheck.Status.ERROR, "run: no If", "run", 0, 0)));
        OperatorTable.Table t = OperatorTable.build(List.of(abs, iff), interp, compiled, Set.of("Abs", "If", "Neg"));
        Map<String, OperatorTable.Row> rows = new java.util.HashMap<>();
        t.rows().forEach(r -> rows.put(r.op(), r));
        assertEquals(new OperatorTable.Row("Abs", 1, 1, 1, new TreeSet<>(Set.of(OperatorTable.usage(abs).ops().get("Abs")))), rows.get("Abs"));
        assertEquals(1, rows.get("If").interp());
        assertEquals(0, rows.get("If").compiled());
        assertEquals(0, rows.get("Neg").tests(), "a converted operator without tests still gets its row");
        assertEquals(Set.of("Constant"), t.unsupported(), "operators used without a converter are listed");

        String md = OperatorTable.markdown(t, "Two tests");
        assertTrue(md.contains("| Abs | 1 | ✓ 1 | ✓ 1 |"), md);
        assertTrue(md.contains("| If | 1 | ✓ 1 | 0 |"), md);
        assertTrue(md.contains("| Neg | — | — | — |"), md);
        assertTrue(md.contains("Used by node tests but not converted: Constant."), md);
        assertEquals(Set.of("Abs", "If", "Neg"), OperatorTable.listedOps(md));
    }

    @Test
    void replacesOnlyTheMarkedSection() {
        String doc = "# Title\n\nbefore\n" + OperatorTable.BEGIN + "\nold table\n" + OperatorTable.END + "\nafter\n";
        String table = OperatorTable.BEGIN + "\nnew table\n" + OperatorTable.END + "\n";
        assertEquals("# Title\n\nbefore\n" + table + "after\n", OperatorTable.replaceSection(doc, table));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> OperatorTable.replaceSection("no markers", table));
        assertTrue(e.getMessage().contains("no operator table section"), e.getMessage());
    }

    private static OnnxCheck.Result pass(String name) {
        return new OnnxCheck.Result(name, OnnxCheck.Status.PASS, "", "", 0, 0);
    }
}
