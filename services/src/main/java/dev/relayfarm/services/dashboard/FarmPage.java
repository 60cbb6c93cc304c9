package dev.relayfarm.services.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.services.gateway.ApiProblem;
import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.gateway.Caller;
import dev.relayfarm.services.gateway.FarmOperations;
import dev.relayfarm.services.gateway.PathIds;
import dev.relayfarm.services.gateway.ProblemType;
import dev.relayfarm.services.gateway.RequiresRole;
import dev.relayfarm.services.gateway.Role;
import dev.relayfarm.services.gateway.TuningRunRequests;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.DeviceRow;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.TuningRunView;
import dev.relayfarm.services.store.TuningRuns;
import dev.relayfarm.services.store.TuningTasks;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The farm page: agents by device class (status, heartbeat age, in-flight, measurements per minute, failures by
 * type), the queue per class, tuning runs with progress and ETA, all live; and the operator's levers: drain an agent,
 * start or cancel a tuning run ({@link Role#OPERATOR}, as in the API, through the same store and request classes).
 */
@Controller
@ServiceRole(Stage.GATEWAY)
public class FarmPage {
    private static final Logger log = LoggerFactory.getLogger(FarmPage.class);
    static final int RUNS = 30;

    private final Devices devices;
    private final TuningTasks tasks;
    private final TuningRuns runs;
    private final TuningRunRequests requests;
    private final FarmOperations operations;
    private final JobStore jobs;
    private final LiveFragments live;
    private final ObjectMapper json;

    public FarmPage(Devices devices, TuningTasks tasks, TuningRuns runs, TuningRunRequests requests, FarmOperations operations, JobStore jobs,
                    LiveFragments live, ObjectMapper json) {
        this.devices = devices;
        this.tasks = tasks;
        this.runs = runs;
        this.requests = requests;
        this.operations = operations;
        this.jobs = jobs;
        this.live = live;
        this.json = json;
    }

    /** A tuning run with its estimated time left (null once it ended). */
    public record RunRow(TuningRunView run, Long etaMs) {}

    /** A device class: its agents and its queue (tasks waiting, being tuned; candidates being measured). */
    public record ClassRow(String deviceClass, List<DeviceRow> devices, int pending, int running, int inFlight) {}

    @GetMapping("/ui/farm")
    String farm(Model m) {
        m.addAllAttributes(farmModel());
        m.addAttribute("classes", devices.classes());
        m.addAttribute("recentJobs", jobs.list(JobStatus.SUCCEEDED, null, null, 20));
        m.addAttribute("active", "farm");
        return "ui/farm";
    }

    @GetMapping(path = "/ui/farm/live", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @ResponseBody
    SseEmitter farmLive(HttpServletRequest request) {
        Map<String, Object> common = PageModel.common(request);
        return live.open("ui/farm", Set.of("devices", "runs"), () -> PageModel.with(common, farmModel()), () -> false, PageModel.session(request));
    }

    Map<String, Object> farmModel() {
        Map<String, List<DeviceRow>> byClass = new TreeMap<>();
        for (DeviceRow d : devices.list()) byClass.computeIfAbsent(d.deviceClass(), k -> new ArrayList<>()).add(d);
        Map<String, TuningTasks.ClassQueue> queues = new TreeMap<>();
        for (TuningTasks.ClassQueue q : tasks.queues()) {
            queues.put(q.deviceClass(), q);
            byClass.putIfAbsent(q.deviceClass(), List.of()); // a queue without agents: the class still shows, waiting
        }
        List<ClassRow> rows = new ArrayList<>();
        byClass.forEach((name, ds) -> {
            TuningTasks.ClassQueue q = queues.get(name);
            rows.add(new ClassRow(name, ds, q == null ? 0 : q.pending(), q == null ? 0 : q.running(), ds.stream().mapToInt(DeviceRow::inFlight).sum()));
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("deviceClasses", rows);
        m.put("runs", runs.list(RUNS).stream().map(r -> new RunRow(r, eta(r, Instant.now()))).toList());
        return m;
    }

    /**
     * Time left: the run stops at its budget's end at the latest; before that, progress so far extrapolated (trials
     * over budgeted trials, each ended task counting whole). Null for an ended run.
     */
    static Long eta(TuningRunView r, Instant now) {
        if (r.ended()) return null;
        long elapsed = Math.max(0, Duration.between(r.createdAt(), now).toMillis());
        long byBudget = Math.max(0, r.budgetMs() - elapsed);
        if (r.progress() <= 0) return byBudget;
        long byProgress = (long) (elapsed * (1 - r.progress()) / r.progress());
        return Math.min(byBudget, byProgress);
    }

    /** The device in a form field, not the path: device ids are HOST/NAME, and a slash does not fit in one path segment. */
    @PostMapping("/ui/farm/drain")
    @RequiresRole(Role.OPERATOR)
    String drain(@RequestParam(name = "device", required = false) String id, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        if (id == null || id.isBlank()) throw new ApiProblem(ProblemType.DEVICE_NOT_FOUND, "no device named: the form field 'device' is empty");
        operations.drain(id, caller);
        return "redirect:/ui/farm";
    }

    @PostMapping("/ui/farm/runs")
    @RequiresRole(Role.OPERATOR)
    String start(@RequestParam(name = "jobId", required = false) String jobId, @RequestParam(name = "deviceClass", required = false) String deviceClass,
                 @RequestParam(name = "budget", required = false) String budget, @RequestParam(name = "strategy", required = false) String strategy,
                 @RequestParam(name = "trialsPerTask", required = false) String trialsPerTask, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        ObjectNode body = json.createObjectNode();
        put(body, "jobId", jobId);
        put(body, "deviceClass", deviceClass);
        put(body, "budget", budget);
        put(body, "strategy", strategy);
        if (trialsPerTask != null && !trialsPerTask.isBlank()) {
            try {
                body.put("trialsPerTask", Integer.parseInt(trialsPerTask.trim()));
            } catch (NumberFormatException e) {
                body.put("trialsPerTask", trialsPerTask.trim()); // the request's check names it
            }
        }
        long id = requests.create(body, caller).runId();
        log.info("tuning run {} started by {} (dashboard)", id, caller.name());
        return "redirect:/ui/farm";
    }

    @PostMapping("/ui/farm/runs/{id}/cancel")
    @RequiresRole(Role.OPERATOR)
    String cancel(@PathVariable("id") String id, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        operations.cancel(PathIds.parse("tuning run", id), caller);
        return "redirect:/ui/farm";
    }

    private static void put(ObjectNode body, String field, String value) {
        if (value != null && !value.isBlank()) body.put(field, value.trim());
    }
}
