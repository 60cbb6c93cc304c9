package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Tokens with roles: 401 for a bad token, 403 naming the role for a good token without it, and the admin token as before. */
class RolesTest extends GatewayTestBase {

    @Test
    void aTokenWithoutTheRoleGets403NamingTheRoleAndOneWithItGets200() throws Exception {
        long schedule = FarmRows.proposed(jdbc, FarmRows.uniqueId("roles-wl"), "cpu-roles", 10, 20, 2, "worker-1");
        HttpResponse<String> denied = postJson(SUBMITTER, "/api/v1/schedules/" + schedule + "/approve", "{\"note\": \"looks good\"}");
        JsonNode p = assertProblem(denied, 403, "needs the 'reviewer' role");
        assertTrue(p.get("detail").asText().contains("the token 'sam' has the role(s) submitter"), p.toString());
        assertEquals("/api/v1/docs#problem-forbidden", p.get("type").asText());
        assertEquals("reviewer", p.get("requiredRole").asText());
        assertEquals("sam", p.get("caller").asText());
        assertEquals(List.of("submitter"), json.convertValue(p.get("callerRoles"), List.class));
        assertEquals("PENDING", jdbc.queryForObject("SELECT status FROM schedules WHERE id = ?", String.class, schedule), "nothing changed");

        HttpResponse<String> ok = postJson(REVIEWER, "/api/v1/schedules/" + schedule + "/approve", "{\"note\": \"looks good\"}");
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals("rita", body(ok).get("schedule").get("reviewer").asText());
    }

    @Test
    void anUnknownTokenIs401NotForbidden() {
        HttpResponse<String> r = send(as("not-a-token", "/api/v1/devices").GET().build());
        assertProblem(r, 401, "the bearer token is not valid");
        assertEquals("Bearer realm=\"relayfarm\"", r.headers().firstValue("WWW-Authenticate").orElse(""));
    }

    @Test
    void jobsNeedTheSubmitterRoleAndTheAdminTokenStillHasIt() throws Exception {
        // the admin token (relayfarm.token) submits and reads as before
        UUID admin = submitRelay("admin-job.relay");
        assertEquals(200, get("/api/v1/jobs/" + admin).statusCode());
        assertEquals(GatewayToken.id(TOKEN), jobRow(admin).get("token_id"));

        Form form = new Form().file("model", "sam.relay", RELAY.getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> r = send(as(SUBMITTER, "/api/v1/jobs").header("Content-Type", "multipart/form-data; boundary=" + form.boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(form.bytes())).build());
        assertEquals(201, r.statusCode(), r.body());
        UUID sams = UUID.fromString(body(r).get("id").asText());
        assertEquals(GatewayToken.id(SUBMITTER), jobRow(sams).get("token_id"), "quotas count per token");

        int before = jdbc.queryForObject("SELECT count(*) FROM jobs", Integer.class);
        Form again = new Form().file("model", "rita.relay", RELAY.getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> reviewer = send(as(REVIEWER, "/api/v1/jobs").header("Content-Type", "multipart/form-data; boundary=" + again.boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(again.bytes())).build());
        assertProblem(reviewer, 403, "needs the 'submitter' role");
        assertProblem(send(as(OPERATOR, "/api/v1/jobs/" + sams).GET().build()), 403, "needs the 'submitter' role");
        assertEquals(before, jdbc.queryForObject("SELECT count(*) FROM jobs", Integer.class), "a refused submit stores nothing");
    }

    @Test
    void readsNeedAnyValidTokenAndOperatorCallsTheOperatorRole() {
        for (String token : List.of(SUBMITTER, REVIEWER, OPERATOR, AGENT, TOKEN)) {
            for (String path : List.of("/api/v1/devices", "/api/v1/schedules", "/api/v1/tuning-runs")) {
                HttpResponse<String> r = send(as(token, path).GET().build());
                assertEquals(200, r.statusCode(), path + " with " + token + ": " + r.body());
            }
        }
        String device = FarmRows.uniqueId("roles-dev");
        FarmRows.device(jdbc, device, "cpu-roles", "ONLINE", 0);
        assertProblem(postJson(REVIEWER, "/api/v1/devices/" + device + "/drain", null), 403, "needs the 'operator' role");
        assertProblem(postJson(AGENT, "/api/v1/records/import", ""), 403, "the token 'ada' has the role(s) agent");
        assertProblem(postJson(SUBMITTER, "/api/v1/tuning-runs", "{}"), 403, "needs the 'operator' role");
        assertEquals(200, postJson(OPERATOR, "/api/v1/devices/" + device + "/drain", null).statusCode());
        assertEquals(200, postJson(TOKEN, "/api/v1/devices/" + device + "/drain", null).statusCode(), "admin has every role");
    }
}
