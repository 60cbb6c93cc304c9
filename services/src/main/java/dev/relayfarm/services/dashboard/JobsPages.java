package dev.relayfarm.services.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.services.gateway.ApiProblem;
import dev.relayfarm.services.gateway.ArtifactDownloads;
import dev.relayfarm.services.gateway.JobRepository;
import dev.relayfarm.services.gateway.JobView;
import dev.relayfarm.services.gateway.JobsController;
import dev.relayfarm.services.gateway.ProblemType;
import dev.relayfarm.services.gateway.RequiresRole;
import dev.relayfarm.services.gateway.Role;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The dashboard's jobs: the list (filters: status, model, age; rows live) and a job's page (stage timeline as bars,
 * error with its stage, the schedules applied, artifact download; live until the job ends). Reads only, for
 * {@link Role#SUBMITTER} as in the API: jobs and their artifacts are the submitters'.
 */
@Controller
@ServiceRole(Stage.GATEWAY)
@RequiresRole(Role.SUBMITTER)
public class JobsPages {
    static final int LIMIT = 200;
    /** The age filter's choices, as the form offers them. */
    static final Map<String, Duration> AGES = ages();

    private final JobStore store;
    private final JobRepository jobs;
    private final ArtifactDownloads downloads;
    private final LiveFragments live;

    public JobsPages(JobStore store, JobRepository jobs, ArtifactDownloads downloads, LiveFragments live) {
        this.store = store;
        this.jobs = jobs;
        this.downloads = downloads;
        this.live = live;
    }

    private static Map<String, Duration> ages() {
        Map<String, Duration> m = new LinkedHashMap<>();
        m.put("1h", Duration.ofHours(1));
        m.put("24h", Duration.ofHours(24));
        m.put("7d", Duration.ofDays(7));
        return m;
    }

    /** The list's filters as given, checked: a bad value is a 400 page naming it, not an empty list. */
    public record Filter(String status, String model, String age) {
        public Filter {
            status = blank(status) ? "" : status.trim().toUpperCase(Locale.ROOT);
            model = blank(model) ? "" : model.trim();
            age = blank(age) ? "" : age.trim();
            if (!status.isEmpty()) {
                try {
                    JobStatus.valueOf(status);
                } catch (IllegalArgumentException e) {
                    throw new ApiProblem(ProblemType.BAD_STATUS, "status must be one of "
                            + java.util.Arrays.toString(JobStatus.values()) + ", got '" + status + "'");
                }
            }
            if (!age.isEmpty() && !AGES.containsKey(age)) {
                throw new ApiProblem(ProblemType.BAD_LIMIT, "age must be one of " + AGES.keySet() + ", got '" + age + "'");
            }
        }

        public String query() {
            return "status=" + enc(status) + "&model=" + enc(model) + "&age=" + enc(age);
        }

        private static String enc(String s) {
            return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    @GetMapping("/ui/jobs")
    String list(@RequestParam(name = "status", required = false) String status, @RequestParam(name = "model", required = false) String model,
                @RequestParam(name = "age", required = false) String age, Model m) {
        Filter f = new Filter(status, model, age);
        m.addAllAttributes(listModel(f));
        m.addAttribute("filter", f);
        m.addAttribute("statuses", JobStatus.values());
        m.addAttribute("ages", AGES.keySet());
        m.addAttribute("active", "jobs");
        return "ui/jobs";
    }

    @GetMapping(path = "/ui/jobs/live", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @ResponseBody
    SseEmitter listLive(@RequestParam(name = "status", required = false) String status, @RequestParam(name = "model", required = false) String model,
                        @RequestParam(name = "age", required = false) String age, HttpServletRequest request) {
        Filter f = new Filter(status, model, age);
        Map<String, Object> common = PageModel.common(request);
        return live.open("ui/jobs", Set.of("rows"), () -> PageModel.with(common, listModel(f)), () -> false, PageModel.session(request));
    }

    private Map<String, Object> listModel(Filter f) {
        Instant since = f.age().isEmpty() ? null : Instant.now().minus(AGES.get(f.age()));
        List<JobRow> rows = store.list(f.status().isEmpty() ? null : JobStatus.valueOf(f.status()), f.model(), since, LIMIT);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jobs", rows);
        m.put("limit", LIMIT);
        return m;
    }

    @GetMapping("/ui/jobs/{id}")
    String job(@PathVariable("id") String id, Model m) {
        UUID job = JobsController.jobId(id);
        m.addAllAttributes(jobModel(job));
        m.addAttribute("active", "jobs");
        return "ui/job";
    }

    @GetMapping(path = "/ui/jobs/{id}/live", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @ResponseBody
    SseEmitter jobLive(@PathVariable("id") String id, HttpServletRequest request) {
        UUID job = JobsController.jobId(id);
        jobs.status(job).orElseThrow(() -> ApiProblem.jobNotFound(job));
        Map<String, Object> common = PageModel.common(request);
        return live.open("ui/job", Set.of("progress"), () -> PageModel.with(common, jobModel(job)),
                () -> jobs.status(job).map(JobStatus::terminal).orElse(true), PageModel.session(request));
    }

    /** The artifact, for a browser (the API's download wants a bearer token a browser does not have). */
    @GetMapping("/ui/jobs/{id}/artifact")
    ResponseEntity<byte[]> artifact(@PathVariable("id") String id) {
        return downloads.of(JobsController.jobId(id));
    }

    /** A stage's time on the bar: its duration once finished, else until the job ended, else until now (still running). */
    public record StageBar(JobView.StageTiming stage, long ms, long width) {}

    private Map<String, Object> jobModel(UUID id) {
        JobView view = jobs.find(id).orElseThrow(() -> ApiProblem.jobNotFound(id));
        Instant end = view.status().terminal() && view.finishedAt() != null ? view.finishedAt() : Instant.now();
        List<Long> ms = view.stages().stream().map(s -> s.durationMs() != null ? s.durationMs()
                : s.startedAt() == null ? 0L : Math.max(0, Duration.between(s.startedAt(), end).toMillis())).toList();
        long longest = Math.max(1, ms.stream().mapToLong(Long::longValue).max().orElse(1));
        List<StageBar> bars = new ArrayList<>();
        for (int i = 0; i < ms.size(); i++) bars.add(new StageBar(view.stages().get(i), ms.get(i), PageModel.FORMATS.barWidth(ms.get(i), longest)));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job", view);
        m.put("stages", bars);
        m.put("applied", applied(id));
        return m;
    }

    /** The schedules the autotuner stage chose, as its output lists them: workload, template, source, schedule id. */
    private List<JsonNode> applied(UUID id) {
        List<JsonNode> out = new ArrayList<>();
        store.stageOutput(id, Stage.AUTOTUNER.wireName).ifPresent(o -> o.path("payload").path("schedules").forEach(out::add));
        return out;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
