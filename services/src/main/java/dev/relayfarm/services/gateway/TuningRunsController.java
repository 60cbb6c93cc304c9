package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.TuningRunCreated;
import dev.relayfarm.services.store.TuningRunView;
import dev.relayfarm.services.store.TuningRuns;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

/**
 * Tuning runs: tune the workloads of a job's optimized module for a device class, follow the run, cancel it. Creating
 * and cancelling need {@link Role#OPERATOR}; reads any valid token. Thin: {@link TuningRunRequests} checks and creates,
 * {@link TuningRuns} stores, {@link TuningRunStreams} streams.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
@RequestMapping("/api/v1/tuning-runs")
public class TuningRunsController {
    static final int DEFAULT_LIMIT = 50;
    static final int MAX_LIMIT = 500;

    private final TuningRunRequests requests;
    private final TuningRuns runs;
    private final TuningRunStreams streams;
    private final FarmOperations operations;
    private final ObjectMapper json;

    public TuningRunsController(TuningRunRequests requests, TuningRuns runs, TuningRunStreams streams, FarmOperations operations, ObjectMapper json) {
        this.requests = requests;
        this.runs = runs;
        this.streams = streams;
        this.operations = operations;
        this.json = json;
    }

    /** 201 with the run (its tasks included) and which tasks it created and which it joined. */
    @PostMapping
    @RequiresRole(Role.OPERATOR)
    ResponseEntity<ObjectNode> create(@RequestBody(required = false) String body, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        TuningRunCreated created = requests.create(json, body, caller);
        ObjectNode view = json.valueToTree(find(created.runId()));
        view.set("createdTaskIds", json.valueToTree(created.newTaskIds()));
        view.set("joinedTaskIds", json.valueToTree(created.joinedTaskIds()));
        URI location = ServletUriComponentsBuilder.fromCurrentContextPath().path("/api/v1/tuning-runs/" + created.runId()).build().toUri();
        return ResponseEntity.created(location).body(view);
    }

    @GetMapping
    Map<String, Object> list(@RequestParam(name = "limit", required = false) String limit) {
        int n = DEFAULT_LIMIT;
        if (limit != null && !limit.isBlank()) {
            try {
                n = Integer.parseInt(limit.trim());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 1 || n > MAX_LIMIT) throw new ApiProblem(ProblemType.BAD_LIMIT, "limit must be an integer in 1.." + MAX_LIMIT + ", got '" + limit + "'");
        }
        List<TuningRunView> rows = runs.list(n);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("runs", rows);
        body.put("count", rows.size());
        body.put("limit", n);
        return body;
    }

    @GetMapping("/{id}")
    TuningRunView get(@PathVariable("id") String id) {
        return find(PathIds.parse("tuning run", id));
    }

    /** CANCELLED, with its tasks no other live run needs; 409 for a run that already ended. */
    @PostMapping("/{id}/cancel")
    @RequiresRole(Role.OPERATOR)
    TuningRunView cancel(@PathVariable("id") String id, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        long run = PathIds.parse("tuning run", id);
        operations.cancel(run, caller);
        return find(run);
    }

    @GetMapping(path = "/{id}/events", produces = {MediaType.TEXT_EVENT_STREAM_VALUE, MediaType.APPLICATION_PROBLEM_JSON_VALUE})
    SseEmitter events(@PathVariable("id") String id) {
        long run = PathIds.parse("tuning run", id);
        if (runs.status(run).isEmpty()) throw notFound(run);
        return streams.open(run);
    }

    private TuningRunView find(long id) {
        return runs.find(id).orElseThrow(() -> notFound(id));
    }

    private static ApiProblem notFound(long id) {
        return FarmOperations.runNotFound(id);
    }
}
