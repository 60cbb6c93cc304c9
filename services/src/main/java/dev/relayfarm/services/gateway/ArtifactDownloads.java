package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStatus;
import java.util.UUID;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;

/**
 * A job's artifact as a download (tar.gz, named after the model, ETag its SHA-256), the one way the API and the
 * dashboard serve it: 404 for no such job, 409 before it SUCCEEDED, 410 once retention deleted the bytes.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class ArtifactDownloads {
    private final JobRepository jobs;

    public ArtifactDownloads(JobRepository jobs) {
        this.jobs = jobs;
    }

    public ResponseEntity<byte[]> of(UUID job) {
        JobView view = jobs.find(job).orElseThrow(() -> ApiProblem.jobNotFound(job));
        if (view.status() == JobStatus.SUCCEEDED && view.artifact() == null) {
            var expired = jobs.artifactExpiredAt(job);
            if (expired.isPresent()) {
                throw new ApiProblem(ProblemType.ARTIFACT_EXPIRED, "the artifact of job " + job + " was deleted at " + expired.get()
                        + " by the retention policy: jobs finished more than " + jobs.retention().toDays() + " days ago (relayfarm.retention.finished-jobs)"
                        + " keep their record and events, not their bytes; submit the model again to rebuild it");
            }
        }
        if (view.status() != JobStatus.SUCCEEDED || view.artifact() == null) {
            throw new ApiProblem(ProblemType.ARTIFACT_NOT_READY,
                    "job " + job + " is " + view.status() + (view.status().terminal()
                            ? "; only SUCCEEDED jobs have an artifact" : "; its artifact exists once it is SUCCEEDED"));
        }
        byte[] tar = jobs.artifactTar(job).orElseThrow(() -> new ApiProblem(ProblemType.ARTIFACT_NOT_READY,
                "job " + job + " has no artifact row yet"));
        String stem = view.model().name().replaceAll("\\.[A-Za-z0-9]+$", "").replaceAll("[^A-Za-z0-9._-]", "_");
        return ResponseEntity.ok()
                .contentType(MediaType.parseMediaType("application/gzip"))
                .header(HttpHeaders.CONTENT_DISPOSITION, ContentDisposition.attachment().filename(stem + "-" + job + ".tar.gz").build().toString())
                .eTag("\"" + view.artifact().tarSha256() + "\"")
                .body(tar);
    }
}
