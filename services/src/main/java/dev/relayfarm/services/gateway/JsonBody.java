package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;

/**
 * A JSON request body read by the handler rather than bound by Spring, so every mistake is a problem naming the field
 * ({@link ProblemType#BAD_BODY}, or the caller's type) instead of Spring's "failed to read request".
 */
final class JsonBody {
    private final ObjectNode fields;
    private final ProblemType problem;

    private JsonBody(ObjectNode fields, ProblemType problem) {
        this.fields = fields;
        this.problem = problem;
    }

    /** The body as a JSON object; none or a blank body is an empty object. Wrong fields are reported as {@code problem}. */
    static JsonBody parse(ObjectMapper json, String body, ProblemType problem) {
        if (body == null || body.isBlank()) return new JsonBody(JsonNodeFactory.instance.objectNode(), problem);
        JsonNode n;
        try {
            n = json.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ApiProblem(ProblemType.BAD_BODY, "the body is not JSON: " + e.getOriginalMessage());
        }
        if (!(n instanceof ObjectNode o)) throw new ApiProblem(ProblemType.BAD_BODY, "the body must be a JSON object, got " + n.getNodeType());
        return new JsonBody(o, problem);
    }

    /** A body that is already a JSON object (built from form fields, say). */
    static JsonBody of(ObjectNode fields, ProblemType problem) {
        return new JsonBody(fields, problem);
    }

    /** A string field; absent or null is empty, anything but a string is a problem. */
    Optional<String> text(String field) {
        JsonNode v = fields.get(field);
        if (v == null || v.isNull()) return Optional.empty();
        if (!v.isTextual()) throw new ApiProblem(problem, "'" + field + "' must be a string, got " + v);
        return Optional.of(v.asText());
    }

    /** An integer field in {@code min..max}; absent or null is empty. */
    Optional<Integer> integer(String field, int min, int max) {
        JsonNode v = fields.get(field);
        if (v == null || v.isNull()) return Optional.empty();
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < min || v.asInt() > max) {
            throw new ApiProblem(problem, "'" + field + "' must be an integer in " + min + ".." + max + ", got " + v);
        }
        return Optional.of(v.asInt());
    }
}
