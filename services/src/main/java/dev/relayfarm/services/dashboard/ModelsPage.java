package dev.relayfarm.services.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.services.gateway.ApiProblem;
import dev.relayfarm.services.gateway.JobRepository;
import dev.relayfarm.services.gateway.JobView;
import dev.relayfarm.services.gateway.JobsController;
import dev.relayfarm.services.gateway.ProblemType;
import dev.relayfarm.services.gateway.RequiresRole;
import dev.relayfarm.services.gateway.Role;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.TuningRecords;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

/**
 * The models page: a compiled model's fused kernels (from its artifact's manifest) with their workload, the schedule
 * they were built with (tuned, stored or the template default) and what the farm measured of them: the cost of the
 * config applied and of the default, times calls per run. Sorted by measured time per run, so the top rows are where
 * tuning pays next; a kernel never measured is said to be so, not guessed. For {@link Role#SUBMITTER}, like the jobs
 * pages: a model's kernels come from its job's artifact.
 */
@Controller
@ServiceRole(Stage.GATEWAY)
@RequiresRole(Role.SUBMITTER)
public class ModelsPage {
    private final JobStore store;
    private final JobRepository jobs;
    private final TuningRecords records;

    public ModelsPage(JobStore store, JobRepository jobs, TuningRecords records) {
        this.store = store;
        this.jobs = jobs;
        this.records = records;
    }

    /**
     * One kernel of the artifact.
     *
     * @param costUs        median measured cost of the config it was built with; null when never measured
     * @param defaultCostUs median measured cost of its template default; null when never measured
     * @param perRunUs      {@code calls x (costUs, else defaultCostUs)}: its time per model run as far as measured
     * @param share         {@code perRunUs} over the sum of the measured kernels'
     */
    public record KernelRow(String name, String workload, String template, String source, JsonNode config, int calls, Double costUs,
                            Double defaultCostUs, Double perRunUs, Double share) {}

    @GetMapping("/ui/models")
    String models(Model m) {
        m.addAttribute("jobs", store.list(JobStatus.SUCCEEDED, null, null, 100));
        m.addAttribute("active", "models");
        return "ui/models";
    }

    /**
     * A kernel's microseconds per model run: its calls times the applied config's median cost, else the default's; null
     * when the farm measured neither (a layout transform nobody tunes). Written without a conditional mixing {@code double}
     * and {@code Double}: that one unboxed the null and failed the whole page.
     */
    static Double perRunUs(int calls, Double cost, Double defaultCost) {
        if (cost != null) return calls * cost;
        if (defaultCost != null) return calls * defaultCost;
        return null;
    }

    @GetMapping("/ui/models/{jobId}")
    String model(@PathVariable("jobId") String jobId, Model m) {
        UUID id = JobsController.jobId(jobId);
        JobView job = jobs.find(id).orElseThrow(() -> ApiProblem.jobNotFound(id));
        JsonNode manifest = jobs.manifest(id).orElseThrow(() -> new ApiProblem(ProblemType.ARTIFACT_NOT_READY,
                "job " + id + " is " + job.status() + " and has no compiled artifact, so no kernels to show"));
        List<JsonNode> kernels = new ArrayList<>();
        manifest.path("kernels").forEach(kernels::add);
        TuningRecords.MeasuredCosts costs = records.measuredCosts(job.target(), kernels.stream().map(k -> k.path("workload").asText()).toList());
        List<KernelRow> rows = new ArrayList<>();
        double total = 0;
        for (JsonNode k : kernels) {
            String workload = k.path("workload").asText();
            JsonNode config = k.path("config").isMissingNode() || k.path("config").isNull() ? null : k.path("config");
            Double cost = config == null ? null : costs.of(workload, TuningRecords.canonical(config.toString()));
            Double def = costs.defaultOf(workload);
            int calls = k.path("calls").asInt(1);
            Double per = perRunUs(calls, cost, def);
            if (per != null) total += per;
            rows.add(new KernelRow(k.path("name").asText(), workload, config == null ? "—" : config.path("template").asText("—"),
                    k.path("source").asText("—"), config, calls, cost, def, per, null));
        }
        double sum = total;
        rows = rows.stream().map(r -> new KernelRow(r.name(), r.workload(), r.template(), r.source(), r.config(), r.calls(), r.costUs(), r.defaultCostUs(),
                r.perRunUs(), r.perRunUs() == null || sum <= 0 ? null : r.perRunUs() / sum))
                .sorted(Comparator.comparing(KernelRow::perRunUs, Comparator.nullsLast(Comparator.reverseOrder()))).toList();
        m.addAttribute("job", job);
        m.addAttribute("kernels", rows);
        m.addAttribute("measuredUs", total);
        m.addAttribute("active", "models");
        return "ui/model";
    }
}
