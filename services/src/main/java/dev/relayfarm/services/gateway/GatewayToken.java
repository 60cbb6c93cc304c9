package dev.relayfarm.services.gateway;

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
import dev.relayfarm.services.kit.Stage;

/**
 * The bearer token every {@code /api/v1} call must present. Read from {@code relayfarm.token} (Spring's relaxed
 * binding also reads the environment variable {@code RELAYFARM_TOKEN}). In local mode ({@code relayfarm.local=true})
 * a missing token is generated and logged at start-up, so the services started by hand work without set-up yet are
 * never open; such a token is not kept. The local farm ({@code ./relayfarm up}, module infra) always passes
 * {@code relayfarm.token}: it owns the kept token ({@code <work-dir>/token}, read by {@code FarmConfig.defaults},
 * written owner-only by {@code LocalFarm}). Outside local mode a missing token is not an open door either: every call is refused with a 401 that says
 * the server has no token, and start-up logs an error (the process still starts, so the stage roles running in the
 * same application are unaffected).
 */
@Component
@ServiceRole(Stage.GATEWAY)
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
            byte[] random = new byte[24];
            new SecureRandom().nextBytes(random);
            token = Optional.of(Base64.getUrlEncoder().withoutPadding().encodeToString(random));
            log.info("relayfarm.local: generated API token (set RELAYFARM_TOKEN to choose one): {}", token.get());
            generated = true;
        } else {
            token = Optional.empty();
            generated = false;
            log.error("no API token configured (RELAYFARM_TOKEN / relayfarm.token): the gateway refuses every /api/v1 call with 401");
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
