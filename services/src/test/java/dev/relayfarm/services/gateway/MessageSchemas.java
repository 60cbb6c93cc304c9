package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.relayfarm.services.kit.Envelopes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/** The message contract's JSON Schemas ({@code schemas/messages/<name>.schema.json}), for checking what the gateway sends. */
final class MessageSchemas {
    private MessageSchemas() {}

    /** The validation errors of {@code message} against schema {@code name}; empty when it conforms. */
    static List<String> errors(String name, JsonNode message) {
        try {
            JsonNode node = Envelopes.MAPPER.readTree(Path.of("..", "schemas", "messages", name + ".schema.json").toFile());
            Schema schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(node);
            return schema.validate(message).stream().map(Object::toString).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
