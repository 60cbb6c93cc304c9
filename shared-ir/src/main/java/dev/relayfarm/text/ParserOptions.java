package dev.relayfarm.text;

/**
 * Options of {@link RelayParser}.
 *
 * <p>{@code maxDepth} bounds syntactic nesting: parentheses, call arguments, tuple fields, {@code fn}
 * and {@code if} bodies, let values, match scrutinees and clauses, unary minus, types, patterns,
 * dimension expressions and attribute lists each count one level. The parser recurses once per level,
 * and so do parts of type inference, printing and the passes on what it builds (a function nested in
 * a function, a type in a type), so an unbounded input could end any of them in a
 * {@link StackOverflowError}. A program at the limit parses, infers, interprets, prints, round-trips
 * through JSON and optimizes at -O3 on a 512 KiB thread stack ({@code DeepNestingTest}); anything
 * deeper is a {@link RelayParseException} at the first token past the limit. Sequences (let chains,
 * graph bindings, else-if chains, infix chains, argument lists) are not nesting and are unbounded.
 *
 * @param maxDepth the deepest nesting accepted, at least 1
 */
public record ParserOptions(int maxDepth) {
    /**
     * 128 levels. Real programs nest a few levels deep (the printer writes dataflow as graph bindings,
     * not nested calls; ONNX control flow nests one function per subgraph, and protobuf already stops
     * subgraphs at 100 messages deep); CPython's parser stops at 200 nested parentheses for the same
     * reason. Measured on a 512 KiB stack with cold code, the consumers downstream overflow between
     * 250 and 400 levels (let values in the printer first, tuple types in inference), so 128 keeps a
     * margin of about 2x for deeper callers and other JIT states. The parser itself runs large inputs
     * on a stack of its own ({@code RelayParser.onOwnStack}): its frames per level vary too much.
     * Not a setting: the JSON IR between the farm's stages and type inference hold the same limit
     * ({@code IrJson.MAX_NESTING_DEPTH}, {@code Inferencer.MAX_TYPE_DEPTH}), so what parses also travels.
     */
    public static final int DEFAULT_MAX_DEPTH = 128;
    public static final ParserOptions DEFAULT = new ParserOptions(DEFAULT_MAX_DEPTH);

    public ParserOptions {
        if (maxDepth < 1) throw new IllegalArgumentException("maxDepth must be at least 1, got " + maxDepth);
    }
}
