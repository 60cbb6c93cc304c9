package dev.relayfarm.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The metadata section that follows a module: {@code #[metadata]} and then a JSON object holding the
 * tensors that {@code meta[relay.Constant][i]} refers to:
 *
 * <pre>
 * #[metadata]
 * {
 *   "relay.Constant": [
 *     {"dtype": "float32", "shape": [2, 2], "data": "AACAPwAAAEAAAEBAAACAQA=="}
 *   ]
 * }
 * </pre>
 *
 * {@code data} is base64 of the elements' little-endian bytes, row-major ({@link NDArray#toBytes}):
 * bool takes one byte per element, float16/bfloat16 their raw 16 bits. This is our own layout, not
 * TVM's (TVM embeds its object-graph JSON there), chosen to be easy to read and write by hand.
 */
final class Metadata {
    static final String CONSTANTS = "relay.Constant";

    private Metadata() {}

    /** Renders the section (with its {@code #[metadata]} header line) for the given constants. */
    static String format(List<NDArray> constants) {
        StringBuilder sb = new StringBuilder("#[metadata]\n{\n  \"").append(CONSTANTS).append("\": [\n");
        for (int i = 0; i < constants.size(); i++) {
            NDArray a = constants.get(i);
            sb.append("    {\"dtype\": \"").append(a.dtype()).append("\", \"shape\": [");
            int[] shape = a.shape();
            for (int d = 0; d < shape.length; d++) {
                if (d > 0) sb.append(", ");
                sb.append(shape[d]);
            }
            sb.append("], \"data\": \"").append(Base64.getEncoder().encodeToString(a.toBytes())).append("\"}");
            sb.append(i + 1 < constants.size() ? ",\n" : "\n");
        }
        return sb.append("  ]\n}\n").toString();
    }

    /** Parses the JSON after {@code #[metadata]}; throws IllegalArgumentException naming the problem. */
    static List<NDArray> parse(String json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("metadata section is not valid JSON: " + e.getOriginalMessage());
        }
        List<NDArray> out = new ArrayList<>();
        if (root == null || root.isMissingNode()) return out;
        if (!root.isObject()) throw new IllegalArgumentException("metadata section must be a JSON object");
        JsonNode consts = root.get(CONSTANTS);
        if (consts == null) return out;
        if (!consts.isArray()) throw new IllegalArgumentException("metadata \"" + CONSTANTS + "\" must be an array");
        for (int i = 0; i < consts.size(); i++) {
            JsonNode c = consts.get(i);
            String where = "metadata " + CONSTANTS + "[" + i + "]";
            if (!c.hasNonNull("dtype") || !c.hasNonNull("shape") || !c.hasNonNull("data")) {
                throw new IllegalArgumentException(where + " needs \"dtype\", \"shape\" and \"data\"");
            }
            DType dtype;
            try {
                dtype = DType.parse(c.get("dtype").asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
            JsonNode shapeNode = c.get("shape");
            if (!shapeNode.isArray()) throw new IllegalArgumentException(where + ": \"shape\" must be an array of integers");
            int[] shape = new int[shapeNode.size()];
            for (int d = 0; d < shape.length; d++) {
                if (!shapeNode.get(d).canConvertToInt()) throw new IllegalArgumentException(where + ": \"shape\" must be an array of integers");
                shape[d] = shapeNode.get(d).asInt();
            }
            byte[] bytes;
            try {
                bytes = Base64.getDecoder().decode(c.get("data").asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": \"data\" is not base64: " + e.getMessage());
            }
            try {
                out.add(NDArray.fromBytes(dtype, shape, bytes));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
        }
        return out;
    }
}
