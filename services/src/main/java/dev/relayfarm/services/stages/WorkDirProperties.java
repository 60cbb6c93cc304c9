package dev.relayfarm.services.stages;

import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where stages write files ({@code relayfarm.work-dir}): codegen builds each job's artifact in
 * {@code <work-dir>/artifacts/<job id>}.
 *
 * @param workDir default {@code <java.io.tmpdir>/relayfarm}
 */
@ConfigurationProperties("relayfarm")
public record WorkDirProperties(Path workDir) {
    public WorkDirProperties {
        if (workDir == null) workDir = Path.of(System.getProperty("java.io.tmpdir"), "relayfarm");
    }
}
