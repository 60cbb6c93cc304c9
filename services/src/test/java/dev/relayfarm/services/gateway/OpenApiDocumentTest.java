package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The hand-written OpenAPI document and the controllers describe the same API: every mapped gateway endpoint is in
 * {@code paths} with its method, every documented operation is mapped and names the role its handler requires
 * ({@code x-required-role}, {@link RequiresRole}), and every {@link ProblemType} is listed for the docs page with its
 * status.
 */
class OpenApiDocumentTest extends GatewayTestBase {
    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    @Test
    void everyEndpointIsDocumentedAndEveryDocumentedOperationExists() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/api/v1/openapi.json")).GET().build());
        assertEquals(200, r.statusCode());
        JsonNode doc = json.readTree(r.body());
        assertTrue(doc.get("openapi").asText().startsWith("3."));

        Set<String> mapped = new TreeSet<>();
        Map<String, String> roles = new TreeMap<>();
        mappings.getHandlerMethods().forEach((info, method) -> {
            if (!method.getBeanType().getPackageName().equals(JobsController.class.getPackageName())) return;
            Role role = RoleInterceptor.required(method);
            for (String path : info.getPatternValues()) {
                for (var m : info.getMethodsCondition().getMethods()) {
                    String op = m.name().toLowerCase(Locale.ROOT) + " " + path;
                    mapped.add(op);
                    roles.put(op, role == null ? "" : role.wireName());
                }
            }
        });
        Set<String> documented = new TreeSet<>();
        for (Iterator<String> paths = doc.get("paths").fieldNames(); paths.hasNext(); ) {
            String path = paths.next();
            doc.get("paths").get(path).fieldNames().forEachRemaining(m -> documented.add(m + " " + path));
        }
        assertEquals(25, mapped.size(), "the gateway's endpoints: " + mapped);
        assertEquals(mapped, documented);
        // the role each operation documents (x-required-role) is the one its handler requires (@RequiresRole)
        Map<String, String> documentedRoles = new TreeMap<>();
        for (String op : documented) {
            String[] mp = op.split(" ", 2);
            documentedRoles.put(op, doc.get("paths").get(mp[1]).get(mp[0]).path("x-required-role").asText(""));
        }
        assertEquals(roles, documentedRoles);
    }

    @Test
    void everyProblemTypeIsListed() throws Exception {
        JsonNode doc = json.readTree(send(HttpRequest.newBuilder(uri("/api/v1/openapi.json")).GET().build()).body());
        Set<String> listed = new TreeSet<>();
        doc.get("x-problem-types").fieldNames().forEachRemaining(listed::add);
        Set<String> kinds = new TreeSet<>();
        for (ProblemType t : ProblemType.values()) {
            kinds.add(t.slug);
            assertTrue(doc.get("x-problem-types").path(t.slug).asText().startsWith(t.status.value() + ":"),
                    t.slug + " is listed with its status " + t.status.value());
        }
        kinds.add("http-<status>");
        assertEquals(kinds, listed);
    }

    @Test
    void theDocsPageIsSelfContained() {
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/api/v1/docs")).GET().build());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(r.body().contains("fetch('/api/v1/openapi.json')"));
        assertTrue(!r.body().contains("<script src=") && !r.body().contains("<link "), "no external scripts or styles");
    }

}
