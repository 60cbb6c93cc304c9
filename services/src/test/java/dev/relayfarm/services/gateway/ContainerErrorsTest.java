package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import org.junit.jupiter.api.Test;

/** Errors raised by Tomcat itself, before Spring MVC, answer problem+json like the API's own. */
class ContainerErrorsTest extends GatewayTestBase {
    @Test
    void anEncodedSlashIsAProblemNotAnHtmlPage() {
        JsonNode p = assertProblem(send(authed("/api/v1%2fjobs").GET().build()), 400, "encoded '/' (%2F)");
        assertEquals("/api/v1/docs#problem-http-400", p.path("type").asText());
        assertEquals("Bad Request", p.path("title").asText());
    }

    @Test
    void theErrorPathIsAProblemToo() {
        JsonNode p = assertProblem(send(HttpRequest.newBuilder(uri("/error")).GET().build()), 500, "");
        assertEquals("/api/v1/docs#problem-http-500", p.path("type").asText());
    }
}
