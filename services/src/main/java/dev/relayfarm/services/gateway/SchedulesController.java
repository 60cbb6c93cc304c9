package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.ScheduleDecision;
import dev.relayfarm.services.store.ScheduleFilter;
import dev.relayfarm.services.store.ScheduleReviews;
import dev.relayfarm.services.store.ScheduleRow;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Schedule review: the schedules tuner workers proposed, with their history and the measurements behind them, and a
 * reviewer's decisions (approve, reject with a reason, pin). Reads need any valid token, decisions
 * {@link Role#REVIEWER}; the reviewer recorded is the caller's token name, never a name from the body.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
@RequestMapping("/api/v1/schedules")
public class SchedulesController {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    static final Set<String> STATUSES = Set.of("PENDING", "APPROVED", "REJECTED", "PINNED");

    private final ScheduleReviews reviews;
    private final ScheduleDecisions decisions;
    private final ObjectMapper json;

    public SchedulesController(ScheduleReviews reviews, ScheduleDecisions decisions, ObjectMapper json) {
        this.reviews = reviews;
        this.decisions = decisions;
        this.json = json;
    }

    @GetMapping
    Map<String, Object> list(@RequestParam(name = "workload", required = false) String workload,
                             @RequestParam(name = "target", required = false) String target,
                             @RequestParam(name = "status", required = false) String status,
                             @RequestParam(name = "deviceClass", required = false) String deviceClass,
                             @RequestParam(name = "limit", required = false) String limit) {
        String st = blank(status) ? null : status.trim().toUpperCase(Locale.ROOT);
        if (st != null && !STATUSES.contains(st)) {
            throw new ApiProblem(ProblemType.BAD_STATUS, "status must be one of PENDING, APPROVED, REJECTED, PINNED, got '" + status + "'");
        }
        int n = DEFAULT_LIMIT;
        if (!blank(limit)) {
            try {
                n = Integer.parseInt(limit.trim());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 1 || n > MAX_LIMIT) throw new ApiProblem(ProblemType.BAD_LIMIT, "limit must be an integer in 1.." + MAX_LIMIT + ", got '" + limit + "'");
        }
        List<ScheduleRow> rows = reviews.list(new ScheduleFilter(orNull(workload), blank(target) ? null : SubmitFields.target(target).toString(), st, orNull(deviceClass), n));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("schedules", rows);
        body.put("count", rows.size());
        body.put("limit", n);
        return body;
    }

    @GetMapping("/{id}")
    Map<String, Object> get(@PathVariable("id") String id) {
        return detail(PathIds.parse("schedule", id));
    }

    @PostMapping("/{id}/approve")
    @RequiresRole(Role.REVIEWER)
    Map<String, Object> approve(@PathVariable("id") String id, @RequestBody(required = false) String body,
                                @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        return decide(id, ScheduleDecision.APPROVE, body, caller);
    }

    @PostMapping("/{id}/reject")
    @RequiresRole(Role.REVIEWER)
    Map<String, Object> reject(@PathVariable("id") String id, @RequestBody(required = false) String body,
                               @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        return decide(id, ScheduleDecision.REJECT, body, caller);
    }

    @PostMapping("/{id}/pin")
    @RequiresRole(Role.REVIEWER)
    Map<String, Object> pin(@PathVariable("id") String id, @RequestBody(required = false) String body,
                            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        return decide(id, ScheduleDecision.PIN, body, caller);
    }

    @PostMapping("/{id}/unpin")
    @RequiresRole(Role.REVIEWER)
    Map<String, Object> unpin(@PathVariable("id") String id, @RequestBody(required = false) String body,
                              @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        return decide(id, ScheduleDecision.UNPIN, body, caller);
    }

    private Map<String, Object> decide(String id, ScheduleDecision decision, String body, Caller caller) {
        long schedule = PathIds.parse("schedule", id);
        String note = JsonBody.parse(json, body, ProblemType.BAD_BODY).text("note").orElse(null);
        decisions.decide(schedule, decision, note, caller);
        return detail(schedule);
    }

    /** The schedule, its decisions oldest first, and its trials fastest first. */
    private Map<String, Object> detail(long id) {
        ScheduleRow row = reviews.find(id).orElseThrow(() -> notFound(id));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("schedule", row);
        body.put("history", reviews.history(id));
        body.put("trials", reviews.trials(row));
        return body;
    }

    private static ApiProblem notFound(long id) {
        return ScheduleDecisions.notFound(id);
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String orNull(String s) {
        return blank(s) ? null : s.trim();
    }
}
