package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.io.IOException;
import java.io.InputStream;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The API's own description: the hand-written OpenAPI 3 document ({@code gateway/openapi.json}, kept in step with
 * the controllers by {@code OpenApiDocumentTest}) and a docs page that renders it in the browser with a few lines of
 * inline script (no CDN: farm machines are often offline). Both are public (no bearer token needed).
 */
@RestController
@ServiceRole(Stage.GATEWAY)
public class ApiDocsController {
    private final byte[] openApi;
    private final byte[] docs;

    public ApiDocsController() throws IOException {
        this.openApi = read("gateway/openapi.json");
        this.docs = read("gateway/docs.html");
    }

    @GetMapping(path = "/api/v1/openapi.json", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<byte[]> openApi() {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(openApi);
    }

    @GetMapping(path = "/api/v1/docs", produces = MediaType.TEXT_HTML_VALUE)
    ResponseEntity<byte[]> docs() {
        return ResponseEntity.ok().contentType(new MediaType(MediaType.TEXT_HTML, java.nio.charset.StandardCharsets.UTF_8)).body(docs);
    }

    private static byte[] read(String resource) throws IOException {
        try (InputStream in = new ClassPathResource(resource).getInputStream()) {
            return in.readAllBytes();
        }
    }
}
