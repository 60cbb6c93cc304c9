package dev.relayfarm.services.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import dev.relayfarm.services.kit.ServiceRole;

/**
 * The bearer token every {@code /api/v1} call must present. Read from {@code relayfarm.token} (Spring's relaxed
 * binding also reads the environment variable {@code RELAYFARM_TOKEN}). In local mode ({@code relayfarm.local=true})
 * a missing token is generated and logged at start-up, so {@code ./relayfarm up} works without set-up yet is never
 * open; with {@code relayfarm.work-dir} set it is kept in {@code <work-dir>/token} and reused by the next start (a
 * client's exported token keeps working across restarts). Outside local mode a missing token is not an open door either: every call is refused with a 401 that says
 * the server has no token, and start-up logs an error (the process still starts, so the stage roles running in the
 * same application are unaffected).
 */
@Component
@ServiceRole("gateway")
public class GatewayToken {
    private static final Logger log = LoggerFactory.getLogger(GatewayToken.class);

    private final Optional<String> token;
    private final boolean generated;

    public GatewayToken(Environment env) {
        String configured = env.getProperty("relayfarm.token", "").trim();
        boolean local = env.getProperty("relayfarm.local", Boolean.class, false);
        if (!configured.isEmpty()) {
            token = Optional.of(configured);
            generated = false;
        } else if (local) {
            String workDir = env.getProperty("relayfarm.work-dir", "").trim();
            Optional<String> kept = workDir.isEmpty() ? Optional.empty() : kept(Path.of(workDir, "token"));
            if (kept.isPresent()) {
                token = kept;
                log.info("relayfarm.local: API token from {} (set RELAYFARM_TOKEN to choose one)", Path.of(workDir, "token"));
            } else {
                byte[] random = new byte[24];
                new SecureRandom().nextBytes(random);
                token = Optional.of(Base64.getUrlEncoder().withoutPadding().encodeToString(random));
                log.info("relayfarm.local: generated API token (set RELAYFARM_TOKEN to choose one): {}", token.get());
                if (!workDir.isEmpty()) keep(Path.of(workDir, "token"), token.get());
            }
            generated = true;
        } else {
            token = Optional.empty();
            generated = false;
            log.error("no API token configured (RELAYFARM_TOKEN / relayfarm.token): the gateway refuses every /api/v1 call with 401");
        }
    }

    private static Optional<String> kept(Path file) {
        try {
            String t = Files.isRegularFile(file) ? Files.readString(file).strip() : "";
            return t.isEmpty() ? Optional.empty() : Optional.of(t);
        } catch (IOException e) {
            log.warn("cannot read the kept API token {}: {}; generating a new one", file, e.getMessage());
            return Optional.empty();
        }
    }

    private static void keep(Path file, String token) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, token + "\n");
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: the file keeps the folder's default permissions
            }
        } catch (IOException e) {
            log.warn("cannot keep the API token in {}: {}; the next start generates another", file, e.getMessage());
        }
    }

    /** The token, absent when none is configured outside local mode. The local launcher hands it to its clients. */
    public Optional<String> value() {
        return token;
    }

    public boolean generated() {
        return generated;
    }

    /**
     * The token's id: the hex SHA-256 of the token, first 16 digits. What quotas and jobs ({@code jobs.token_id}) are
     * keyed by, so the token itself is stored nowhere and more tokens can come with their own ids.
     */
    public static String id(String token) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d).substring(0, 16);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }

    /** Constant-time comparison, so response timing does not leak how much of a guess was right. */
    boolean matches(String presented) {
        return token.isPresent() && presented != null
                && MessageDigest.isEqual(token.get().getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }
}
