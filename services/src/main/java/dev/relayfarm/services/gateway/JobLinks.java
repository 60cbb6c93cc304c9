package dev.relayfarm.services.gateway;

import dev.relayfarm.services.store.JobStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/** The API paths of one job, relative to the server (clients resolve them against the URL they called). */
final class JobLinks {
    private JobLinks() {}

    static String self(UUID id) {
        return "/api/v1/jobs/" + id;
    }

    static String artifact(UUID id) {
        return self(id) + "/artifact";
    }

    static Map<String, String> of(UUID id, JobStatus status) {
        Map<String, String> links = new LinkedHashMap<>();
        links.put("self", self(id));
        links.put("events", self(id) + "/events");
        if (status == JobStatus.SUCCEEDED) links.put("artifact", artifact(id));
        if (!status.terminal()) links.put("cancel", self(id) + "/cancel");
        return links;
    }
}
