package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The bearer tokens {@code /api/v1} calls present, each with a name and {@link Role}s.
 *
 * <p><b>The admin token</b> is read from {@code relayfarm.token} (Spring's relaxed binding also reads the environment
 * variable {@code RELAYFARM_TOKEN}); it is named {@code admin} and has every role, so a farm set up with one token works
 * as it did before roles. In local mode ({@code relayfarm.local=true}) a missing admin token is generated and logged at
 * start-up, so the services started by hand work without set-up yet are never open; such a token is not kept. The local
 * farm ({@code ./relayfarm up}, module infra) always passes {@code relayfarm.token}: it owns the kept token
 * ({@code <work-dir>/token}, read by {@code FarmConfig.defaults}, written owner-only by {@code LocalFarm}).
 *
 * <p><b>More tokens</b> come from {@code relayfarm.tokens} (environment {@code RELAYFARM_TOKENS}), one string so it fits
 * one environment variable: comma-separated {@code name:roles:token} entries, roles joined by {@code +}, e.g.
 * {@code alice:reviewer:Zm9v...,ci:submitter+operator:YmFy...}. A token may contain {@code :} but not {@code ,}. A
 * malformed entry, an unknown role, a name used twice or the name {@code admin}, or one token under two names stops
 * the gateway at start-up with a message naming the entry by position and name (never its token): a token silently
 * dropped would only show as a reviewer locked out later.
 *
 * <p>Outside local mode no token at all is not an open door either: every call is refused with a 401 that says the
 * server has no token, and start-up logs an error (the process still starts, so the stage roles running in the same
 * application are unaffected). Tokens are never logged (the generated local one excepted: it is printed so it can be
 * used) and are compared in constant time.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class GatewayToken {
    private static final Logger log = LoggerFactory.getLogger(GatewayToken.class);
    /** The name of the {@code relayfarm.token} token, reserved for it. */
    public static final String ADMIN = "admin";

    private final Optional<String> token;
    private final boolean generated;
    private final List<Entry> entries;

    /** One configured token: the SHA-256 of its bytes (what is compared) and who it stands for. */
    private record Entry(byte[] digest, Caller caller) {
        @Override
        public String toString() {
            return caller.name() + " " + caller.roles();
        }
    }

    public GatewayToken(Environment env) {
        String configured = env.getProperty("relayfarm.token", "").trim();
        boolean local = env.getProperty("relayfarm.local", Boolean.class, false);
        List<Entry> named = parse(env.getProperty("relayfarm.tokens", ""));
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
            if (named.isEmpty()) {
                log.error("no API token configured (RELAYFARM_TOKEN / relayfarm.token, RELAYFARM_TOKENS / relayfarm.tokens): the gateway refuses every /api/v1 call with 401");
            }
        }
        List<Entry> all = new ArrayList<>();
        token.ifPresent(t -> all.add(new Entry(digest(t), new Caller(ADMIN, EnumSet.allOf(Role.class), id(t)))));
        for (Entry e : named) {
            if (token.isPresent() && MessageDigest.isEqual(e.digest(), all.getFirst().digest())) {
                throw new IllegalStateException("relayfarm.tokens: the token of '" + e.caller().name() + "' is the admin token (relayfarm.token); give it its own");
            }
            all.add(e);
        }
        entries = List.copyOf(all);
        if (!named.isEmpty()) log.info("gateway tokens: {}", entries.stream().map(Entry::toString).collect(Collectors.joining(", ")));
    }

    /** The entries of {@code relayfarm.tokens}; see the class comment for the format. */
    private static List<Entry> parse(String spec) {
        List<Entry> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        String[] items = spec.split(",");
        for (int i = 0; i < items.length; i++) {
            String item = items[i].trim();
            if (item.isEmpty()) continue;
            String where = "relayfarm.tokens entry " + (i + 1);
            String[] parts = item.split(":", 3);
            if (parts.length < 3) throw new IllegalStateException(where + ": expected name:roles:token (roles joined by '+'), got " + (parts.length) + " field(s)");
            String name = parts[0].trim();
            String secret = parts[2].trim();
            if (!name.matches("[A-Za-z0-9._@-]+")) throw new IllegalStateException(where + ": the name must be letters, digits, '.', '_', '@' or '-', got '" + name + "'");
            where += " ('" + name + "')";
            if (name.equals(ADMIN)) throw new IllegalStateException(where + ": the name 'admin' is the relayfarm.token's; choose another");
            if (!names.add(name)) throw new IllegalStateException(where + ": the name '" + name + "' is used twice");
            if (secret.isEmpty()) throw new IllegalStateException(where + ": the token is empty");
            Set<Role> roles = EnumSet.noneOf(Role.class);
            for (String r : parts[1].split("\\+")) {
                try {
                    roles.add(Role.of(r));
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(where + ": " + e.getMessage());
                }
            }
            Entry entry = new Entry(digest(secret), new Caller(name, roles, id(secret)));
            for (Entry other : out) {
                if (MessageDigest.isEqual(other.digest(), entry.digest())) {
                    throw new IllegalStateException(where + ": the same token as '" + other.caller().name() + "'; every name needs its own token");
                }
            }
            out.add(entry);
        }
        return out;
    }

    /** The admin token, absent when none is configured outside local mode. The local launcher hands it to its clients. */
    public Optional<String> value() {
        return token;
    }

    public boolean generated() {
        return generated;
    }

    /** Whether any token is configured (else every call is refused: nobody could be let in). */
    boolean configured() {
        return !entries.isEmpty();
    }

    /**
     * The caller whose token {@code presented} is. Every configured token is compared, in constant time, whatever
     * matched before: response timing tells neither how much of a guess was right nor which token it was close to.
     */
    public Optional<Caller> authenticate(String presented) {
        if (presented == null) return Optional.empty();
        byte[] d = digest(presented);
        Caller found = null;
        for (Entry e : entries) {
            if (MessageDigest.isEqual(e.digest(), d) && found == null) found = e.caller();
        }
        return Optional.ofNullable(found);
    }

    /**
     * The token's id: the hex SHA-256 of the token, first 16 digits. What quotas and jobs ({@code jobs.token_id}) are
     * keyed by, so the token itself is stored nowhere and every token has its own quotas.
     */
    public static String id(String token) {
        return java.util.HexFormat.of().formatHex(digest(token)).substring(0, 16);
    }

    /** Whether {@code presented} is a configured token (any role). */
    boolean matches(String presented) {
        return authenticate(presented).isPresent();
    }

    /** Equal-length digests, so {@link MessageDigest#isEqual} runs in the same time whatever the lengths presented. */
    private static byte[] digest(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }
}
