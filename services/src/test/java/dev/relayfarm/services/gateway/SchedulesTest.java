package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.services.store.AutoApproval;
import dev.relayfarm.services.store.AutoApproveProperties;
import dev.relayfarm.services.store.ScheduleReviews;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.support.TransactionTemplate;

/** Schedule review: lists and filters, decisions with their history and reviewer names, the trials, and the auto-approve policy. */
class SchedulesTest extends GatewayTestBase {
    @Autowired
    ScheduleReviews reviews;
    @Autowired
    TransactionTemplate tx;

    @Test
    void listFiltersByWorkloadTargetStatusAndDeviceClass() {
        String cls = FarmRows.uniqueId("cpu-list");
        String a = FarmRows.uniqueId("dense-a"), b = FarmRows.uniqueId("dense-b");
        long sa = FarmRows.proposed(jdbc, a, cls, 10, 20, 2, "worker-1");
        long sb = FarmRows.proposed(jdbc, b, cls, 10, 20, 2, "worker-1");
        long other = FarmRows.proposed(jdbc, a, "cpu-other-" + cls, 10, 20, 2, "worker-1");
        assertEquals(200, postJson(REVIEWER, "/api/v1/schedules/" + sb + "/pin", null).statusCode());

        assertEquals(List.of(sb, sa), ids(get("/api/v1/schedules?deviceClass=" + cls)), "most recently updated first");
        assertEquals(List.of(other, sa), ids(get("/api/v1/schedules?workload=" + a)));
        assertEquals(List.of(sa), ids(get("/api/v1/schedules?workload=" + a + "&deviceClass=" + cls + "&target=c%20%20-mcpu%3Dnative")),
                "the target is compared in canonical form");
        assertEquals(List.of(sb), ids(get("/api/v1/schedules?deviceClass=" + cls + "&status=pinned")));
        assertEquals(List.of(), ids(get("/api/v1/schedules?deviceClass=" + cls + "&target=c%20-mcpu%3Dx86-64-v3")));
        JsonNode row = body(get("/api/v1/schedules?workload=" + b)).get("schedules").get(0);
        assertEquals(2.0, row.get("speedup").asDouble(), 1e-9);
        assertEquals("dense_pack.x86", row.get("config").get("template").asText());
        assertEquals(cls, row.get("deviceClass").asText());

        assertProblem(get("/api/v1/schedules?status=MAYBE"), 400, "status must be one of PENDING, APPROVED, REJECTED, PINNED, got 'MAYBE'");
        assertProblem(get("/api/v1/schedules?limit=0"), 400, "limit must be an integer in 1..1000");
        assertProblem(get("/api/v1/schedules/abc"), 400, "not a schedule id: 'abc'");
        assertProblem(get("/api/v1/schedules/999999999"), 404, "no schedule with id 999999999");
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/999999999/approve", null), 404, "no schedule with id 999999999");
    }

    @Test
    void decisionsUpdateTheRowAndAppendHistoryWithTheTokensName() throws Exception {
        String workload = FarmRows.uniqueId("dense-decide");
        long id = FarmRows.proposed(jdbc, workload, "cpu-decide", 12.5, 20, 3, "worker-7");
        FarmRows.record(jdbc, workload, "cpu-decide", null, 14.0, 4, 1);
        FarmRows.record(jdbc, workload, "cpu-decide", null, null, 16, 1);
        FarmRows.record(jdbc, workload, "cpu-decide", null, 12.5, 8, 1);

        // the body cannot choose the reviewer: the token's name is recorded
        HttpResponse<String> approved = postJson(REVIEWER, "/api/v1/schedules/" + id + "/approve", "{\"note\": \" fast on every shape \", \"reviewer\": \"mallory\"}");
        assertEquals(200, approved.statusCode(), approved.body());
        JsonNode s = body(approved).get("schedule");
        assertEquals("APPROVED", s.get("status").asText());
        assertEquals("rita", s.get("reviewer").asText());
        assertEquals("fast on every shape", s.get("note").asText());

        // a rejection needs a reason; without one nothing changes
        JsonNode p = assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", null), 400, "needs a reason");
        assertEquals("note-required", p.get("code").asText());
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", "{\"note\": \"   \"}"), 400, "needs a reason");
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", "{\"note\": 5}"), 400, "'note' must be a string, got 5");
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", "[1]"), 400, "the body must be a JSON object");
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", "{oops"), 400, "the body is not JSON");
        assertEquals("APPROVED", jdbc.queryForObject("SELECT status FROM schedules WHERE id = ?", String.class, id));

        assertEquals(200, postJson(REVIEWER, "/api/v1/schedules/" + id + "/reject", "{\"note\": \"wrong answers on odd batch sizes\"}").statusCode());
        assertEquals(200, postJson(TOKEN, "/api/v1/schedules/" + id + "/approve", null).statusCode(), "a REJECTED schedule can be approved again");
        HttpResponse<String> pinned = postJson(REVIEWER, "/api/v1/schedules/" + id + "/pin", "{\"note\": \"keep\"}");
        assertEquals(200, pinned.statusCode());

        JsonNode detail = body(get("/api/v1/schedules/" + id));
        assertEquals("PINNED", detail.get("schedule").get("status").asText());
        List<String> history = new ArrayList<>();
        for (JsonNode h : detail.get("history")) history.add(h.get("action").asText() + "/" + h.get("status").asText() + "/" + h.get("actor").asText());
        assertEquals(List.of("PROPOSED/PENDING/worker-7", "APPROVED/APPROVED/rita", "REJECTED/REJECTED/rita", "APPROVED/APPROVED/admin",
                "PINNED/PINNED/rita"), history);
        assertEquals("wrong answers on odd batch sizes", detail.get("history").get(2).get("note").asText());
        assertTrue(detail.get("history").get(3).get("note").isNull(), "approving needs no note");
        // the trials: same workload, target and device class, fastest first, failures last
        List<String> trials = new ArrayList<>();
        for (JsonNode t : detail.get("trials")) trials.add(t.get("costUs").isNull() ? t.get("error").asText() : t.get("costUs").asText());
        assertEquals(List.of("12.5", "14.0", "TIMEOUT"), trials);
        assertEquals(8, detail.get("trials").get(0).get("config").get("knobs").get("tile_x").asInt());
    }

    /** Unpin (V7) takes a pin back to APPROVED with an UNPINNED history row; only a reviewer may, and only from PINNED (409). */
    @Test
    void unpinTakesBackOnlyAPin() {
        long id = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-unpin"), "cpu-unpin", 10, 20, 2, "worker-2");
        JsonNode p = assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/unpin", null), 409, "is PENDING, not PINNED");
        assertTrue(p.get("type").asText().endsWith("#problem-schedule-not-pinned"), p.toString());
        assertEquals("PENDING", p.path("scheduleStatus").asText(), "the problem names the status it found, beside its own HTTP status: " + p);
        assertEquals(200, postJson(REVIEWER, "/api/v1/schedules/" + id + "/pin", "{\"note\": \"keep\"}").statusCode());

        assertProblem(postJson(SUBMITTER, "/api/v1/schedules/" + id + "/unpin", null), 403, "needs the 'reviewer' role");
        assertEquals("PINNED", status(id));

        HttpResponse<String> unpinned = postJson(REVIEWER, "/api/v1/schedules/" + id + "/unpin", "{\"note\": \"measure again\"}");
        assertEquals(200, unpinned.statusCode(), unpinned.body());
        JsonNode s = body(unpinned).get("schedule");
        assertEquals("APPROVED", s.get("status").asText());
        assertEquals("rita", s.get("reviewer").asText());
        assertEquals("APPROVED", status(id));
        assertEquals(List.of("PROPOSED/PENDING/worker-2", "PINNED/PINNED/rita", "UNPINNED/APPROVED/rita"),
                jdbc.queryForList("SELECT action || '/' || status || '/' || actor FROM schedule_history WHERE schedule_id = ? ORDER BY id", String.class, id));
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/" + id + "/unpin", null), 409, "is APPROVED, not PINNED");
        assertEquals(3, jdbc.queryForObject("SELECT count(*) FROM schedule_history WHERE schedule_id = ?", Integer.class, id), "a refused unpin adds nothing");
        assertProblem(postJson(REVIEWER, "/api/v1/schedules/999999999/unpin", null), 404, "no schedule with id 999999999");
    }

    @Test
    void autoApproveApprovesOnlyWhatThePolicyAllows() {
        AutoApproval off = reviews.autoApproveIfEligible(FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-off"), "cpu-auto", 10, 20, 5, "w"));
        assertFalse(off.approved());
        assertTrue(off.reason().contains("relayfarm.farm.auto-approve.enabled=false"), off.reason());

        ScheduleReviews on = new ScheduleReviews(jdbc, tx, new AutoApproveProperties(true, 1.1, 2));
        long fast = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-fast"), "cpu-auto", 10, 15, 2, "w");
        AutoApproval yes = on.autoApproveIfEligible(fast);
        assertTrue(yes.approved(), yes.reason());
        assertEquals(List.of("APPROVED/auto-approve"), jdbc.queryForList("SELECT status || '/' || reviewer FROM schedules WHERE id = ?", String.class, fast));
        assertEquals(List.of("PROPOSED/w", "AUTO_APPROVED/auto-approve"),
                jdbc.queryForList("SELECT action || '/' || actor FROM schedule_history WHERE schedule_id = ? ORDER BY id", String.class, fast));
        assertTrue(jdbc.queryForObject("SELECT note FROM schedule_history WHERE schedule_id = ? AND action = 'AUTO_APPROVED'", String.class, fast)
                .startsWith("1.500x faster than the template default"));
        assertFalse(on.autoApproveIfEligible(fast).approved(), "an approved schedule is not approved twice");

        long slow = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-slow"), "cpu-auto", 10, 10.5, 5, "w");
        AutoApproval no = on.autoApproveIfEligible(slow);
        assertFalse(no.approved());
        assertTrue(no.reason().contains("speedup 1.050x is below relayfarm.farm.auto-approve.min-speedup 1.100"), no.reason());
        long once = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-once"), "cpu-auto", 10, 30, 1, "w");
        assertTrue(on.autoApproveIfEligible(once).reason().contains("1 measurement(s), relayfarm.farm.auto-approve.min-measurements is 2"));
        long rejected = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-rejected"), "cpu-auto", 10, 30, 5, "w");
        assertEquals(200, postJson(REVIEWER, "/api/v1/schedules/" + rejected + "/reject", "{\"note\": \"no\"}").statusCode());
        assertFalse(on.autoApproveIfEligible(rejected).approved(), "a reviewer's decision is never overturned by the policy");
        for (long id : List.of(slow, once, rejected)) {
            assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM schedule_history WHERE schedule_id = ? AND action = 'AUTO_APPROVED'", Integer.class, id));
        }
        assertEquals(List.of("PENDING", "PENDING", "REJECTED"), List.of(status(slow), status(once), status(rejected)));
    }

    private String status(long id) {
        return jdbc.queryForObject("SELECT status FROM schedules WHERE id = ?", String.class, id);
    }

    private List<Long> ids(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        List<Long> out = new ArrayList<>();
        for (JsonNode s : body(r).get("schedules")) out.add(s.get("id").asLong());
        return out;
    }
}
