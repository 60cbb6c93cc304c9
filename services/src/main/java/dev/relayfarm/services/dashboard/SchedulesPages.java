package dev.relayfarm.services.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.target.TargetException;
import dev.relayfarm.services.gateway.ApiProblem;
import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.gateway.Caller;
import dev.relayfarm.services.gateway.PathIds;
import dev.relayfarm.services.gateway.ProblemType;
import dev.relayfarm.services.gateway.RequiresRole;
import dev.relayfarm.services.gateway.ScheduleDecisions;
import dev.relayfarm.services.gateway.Role;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.ReviewItem;
import dev.relayfarm.services.store.ReviewQueue;
import dev.relayfarm.services.store.ScheduleDecision;
import dev.relayfarm.services.store.ScheduleFilter;
import dev.relayfarm.services.store.ScheduleReviews;
import dev.relayfarm.services.store.ScheduleRow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestParam;

/**
 * The review queue and a schedule's page: the evidence (tuning curve per strategy, trials, config against the
 * default, models and their share of time), the decision history, what a new job would get, and the reviewer's four
 * actions. Decisions need {@link Role#REVIEWER} (the same rule as the API: {@code @RequiresRole}); the reviewer
 * recorded is the session's token name. A decision answers with a redirect to the schedule's page (post/redirect/get),
 * so it works as a plain form and as an htmx-boosted one.
 */
@Controller
@ServiceRole(Stage.GATEWAY)
public class SchedulesPages {
    static final int LIMIT = 500;

    private final ScheduleReviews reviews;
    private final ReviewQueue queue;
    private final ScheduleDecisions decisions;
    private final ObjectMapper json;

    public SchedulesPages(ScheduleReviews reviews, ReviewQueue queue, ScheduleDecisions decisions, ObjectMapper json) {
        this.reviews = reviews;
        this.queue = queue;
        this.decisions = decisions;
        this.json = json;
    }

    /** The queue's filters as given; PENDING unless asked otherwise ("" is every status). */
    public record Filter(String status, String target, String deviceClass, String minSpeedup) {
        public Filter {
            status = status == null ? "PENDING" : status.trim().toUpperCase(Locale.ROOT);
            target = target == null ? "" : canonical(target.trim());
            deviceClass = deviceClass == null ? "" : deviceClass.trim();
            minSpeedup = minSpeedup == null ? "" : minSpeedup.trim();
            if (!status.isEmpty() && !Set.of("PENDING", "APPROVED", "REJECTED", "PINNED").contains(status)) {
                throw new ApiProblem(ProblemType.BAD_STATUS, "status must be one of PENDING, APPROVED, REJECTED, PINNED, got '" + status + "'");
            }
            if (!minSpeedup.isEmpty()) speedup(minSpeedup);
        }

        /**
         * The target as schedules store it (its canonical text, what the API's filter compares too): "c  -mcpu=native"
         * finds the rows of "c -mcpu=native".
         */
        private static String canonical(String target) {
            if (target.isEmpty()) return target;
            try {
                return Target.parse(target).toString();
            } catch (TargetException e) {
                throw new ApiProblem(ProblemType.BAD_TARGET, "target: " + e.getMessage());
            }
        }

        Double speedupOrNull() {
            return minSpeedup.isEmpty() ? null : speedup(minSpeedup);
        }

        private static double speedup(String text) {
            try {
                double d = Double.parseDouble(text);
                if (d > 0 && Double.isFinite(d)) return d;
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new ApiProblem(ProblemType.BAD_LIMIT, "speedup ≥ must be a positive number such as 1.1, got '" + text + "'");
        }

        ScheduleFilter toStore() {
            return new ScheduleFilter(null, target.isEmpty() ? null : target, status.isEmpty() ? null : status, deviceClass.isEmpty() ? null : deviceClass,
                    speedupOrNull(), LIMIT);
        }
    }

    @GetMapping("/ui/schedules")
    String queue(@RequestParam(name = "status", required = false) String status, @RequestParam(name = "target", required = false) String target,
                 @RequestParam(name = "deviceClass", required = false) String deviceClass, @RequestParam(name = "minSpeedup", required = false) String minSpeedup,
                 Model m) {
        Filter f = new Filter(status, target, deviceClass, minSpeedup);
        List<ReviewItem> items = queue.list(f.toStore());
        m.addAttribute("filter", f);
        m.addAttribute("items", items);
        m.addAttribute("limit", LIMIT);
        m.addAttribute("active", "schedules");
        return "ui/schedules";
    }

    @GetMapping("/ui/schedules/{id}")
    String schedule(@PathVariable("id") String id, Model m) {
        long sid = PathIds.parse("schedule", id);
        ScheduleRow row = reviews.find(sid).orElseThrow(() -> notFound(sid));
        ReviewItem item = queue.item(row);
        m.addAttribute("item", item);
        m.addAttribute("s", row);
        m.addAttribute("history", reviews.history(sid));
        m.addAttribute("trials", reviews.trials(row));
        m.addAttribute("diff", diff(queue.defaultConfig(row).orElse(null), row.config()));
        m.addAttribute("curve", curveJson(queue.curve(row), row.defaultCostUs()));
        m.addAttribute("active", "schedules");
        return "ui/schedule";
    }

    @PostMapping("/ui/schedules/{id}/{action}")
    @RequiresRole(Role.REVIEWER)
    String decide(@PathVariable("id") String id, @PathVariable("action") String action, @RequestParam(name = "note", required = false) String note,
                  @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        long sid = PathIds.parse("schedule", id);
        ScheduleDecision decision = switch (action) {
            case "approve" -> ScheduleDecision.APPROVE;
            case "reject" -> ScheduleDecision.REJECT;
            case "pin" -> ScheduleDecision.PIN;
            case "unpin" -> ScheduleDecision.UNPIN;
            default -> throw new ApiProblem(ProblemType.BAD_BODY, "no schedule action '" + action + "' (approve, reject, pin, unpin)");
        };
        decisions.decide(sid, decision, note, caller);
        return "redirect:/ui/schedules/" + sid;
    }

    /** One knob of the config diff: its default value, the schedule's, and whether they differ. */
    public record KnobDiff(String knob, String defaultValue, String value, boolean changed) {}

    static List<KnobDiff> diff(JsonNode defaultConfig, JsonNode config) {
        JsonNode d = defaultConfig == null ? null : defaultConfig.path("knobs");
        JsonNode c = config.path("knobs");
        Set<String> names = new TreeSet<>();
        c.fieldNames().forEachRemaining(names::add);
        if (d != null) d.fieldNames().forEachRemaining(names::add);
        List<KnobDiff> out = new ArrayList<>();
        for (String n : names) {
            String dv = d == null ? null : d.has(n) ? d.get(n).asText() : "—";
            String v = c.has(n) ? c.get(n).asText() : "—";
            out.add(new KnobDiff(n, dv, v, dv != null && !dv.equals(v)));
        }
        return out;
    }

    /**
     * The curve as uPlot wants it: x = trial number per strategy, one series per strategy with the best cost so far,
     * plus the default's cost as a flat line. Failed trials count as trials (they were paid for) without improving.
     */
    String curveJson(List<ReviewQueue.CurvePoint> points, Double defaultCost) {
        Map<String, List<Double>> best = new LinkedHashMap<>();
        for (ReviewQueue.CurvePoint p : points) {
            List<Double> b = best.computeIfAbsent(p.strategy(), k -> new ArrayList<>());
            Double prev = b.isEmpty() ? null : b.getLast();
            Double now = p.costUs() == null ? prev : prev == null ? p.costUs() : Math.min(prev, p.costUs());
            b.add(now);
        }
        int n = best.values().stream().mapToInt(List::size).max().orElse(0);
        Map<String, Object> out = new LinkedHashMap<>();
        List<Integer> xs = new ArrayList<>();
        for (int i = 1; i <= n; i++) xs.add(i);
        out.put("x", xs);
        out.put("series", best);
        out.put("defaultCostUs", defaultCost);
        try {
            // embedded in a <script> element as it is (th:utext): no "<" may end it early, whatever a strategy is called
            return json.writeValueAsString(out).replace("<", "\\u003c");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ApiProblem notFound(long id) {
        return new ApiProblem(ProblemType.SCHEDULE_NOT_FOUND, "no schedule with id " + id);
    }
}
