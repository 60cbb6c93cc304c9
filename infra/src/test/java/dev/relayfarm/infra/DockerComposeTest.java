package dev.relayfarm.infra;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.services.kit.Stage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml cannot run here (no Docker engine), so at least it must not drift from the code: it creates
 * every topic {@link Topics} creates, runs every service role in a container of its own, and builds the image
 * from the Dockerfile that exists.
 */
class DockerComposeTest {
    static final List<String> ROLES = Stage.roles();

    @Test
    void composeFileMatchesTheTopicsAndRoles() throws Exception {
        String compose = Files.readString(Path.of("../docker-compose.yml"));
        for (String topic : Stage.topicNames()) {
            assertTrue(compose.matches("(?s).*[ \"]" + topic.replace(".", "\\.") + "[ \";].*"), "docker-compose.yml does not create topic " + topic);
        }
        for (String role : ROLES) {
            assertTrue(compose.contains("RELAYFARM_ROLES: " + role + "\n"), "docker-compose.yml runs no container with role " + role);
            assertTrue(compose.contains("\n  " + role + ":\n"), "docker-compose.yml has no service " + role);
        }
        assertTrue(compose.contains("dockerfile: infra/docker/Dockerfile"));
        assertTrue(Files.isRegularFile(Path.of("docker/Dockerfile")));
        assertTrue(Files.isRegularFile(Path.of("docker/otel-collector.yaml")));
    }
}
