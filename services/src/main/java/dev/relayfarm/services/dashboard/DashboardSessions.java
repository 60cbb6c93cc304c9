package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.gateway.Caller;
import dev.relayfarm.services.gateway.GatewayToken;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The dashboard's logins: a gateway token ({@link GatewayToken}, the same tokens and roles as the API) entered once
 * in the login form buys a session, whose random id travels in an HttpOnly, SameSite=Strict cookie
 * ({@link DashboardFilter}); the token itself is never stored, in the browser or here. Each session has its own CSRF
 * token, which every state-changing request must carry.
 *
 * <p>Sessions live in this gateway's memory: a restart, or a second gateway behind a load balancer, asks for the token
 * again. That is the price of storing no secret anywhere; a shared session table would be the next step if the farm
 * runs several gateways. A session ends after {@link #IDLE} without a request, or {@link #LIFETIME} after login
 * whatever, so a forgotten laptop does not stay logged in for good.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class DashboardSessions {
    static final Duration IDLE = Duration.ofHours(8);
    static final Duration LIFETIME = Duration.ofHours(24);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final GatewayToken tokens;
    private final Clock clock;
    /** By the SHA-256 of the session id: a heap dump shows no usable cookie. */
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    @Autowired
    public DashboardSessions(GatewayToken tokens) {
        this(tokens, Clock.systemUTC());
    }

    DashboardSessions(GatewayToken tokens, Clock clock) {
        this.tokens = tokens;
        this.clock = clock;
    }

    /** A logged-in browser: who it is, its CSRF token, and when it logged in and was last seen. */
    public static final class Session {
        private final String id;
        private final Caller caller;
        private final String csrf;
        private final Instant created;
        private volatile Instant lastSeen;
        private volatile boolean ended;

        Session(String id, Caller caller, String csrf, Instant created) {
            this.id = id;
            this.caller = caller;
            this.csrf = csrf;
            this.created = created;
            this.lastSeen = created;
        }

        /** The cookie's value; only the login's answer needs it. */
        String id() {
            return id;
        }

        public Caller caller() {
            return caller;
        }

        public String csrf() {
            return csrf;
        }

        /** Whether {@code presented} is this session's CSRF token (constant time). */
        boolean csrfMatches(String presented) {
            return presented != null && MessageDigest.isEqual(presented.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    csrf.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    /** A new session for the caller whose token {@code token} is; empty when it is not a valid token. */
    public Optional<Session> login(String token) {
        expire();
        return tokens.authenticate(token == null ? null : token.trim()).map(caller -> {
            Session s = new Session(random(), caller, random(), clock.instant());
            sessions.put(digest(s.id()), s);
            return s;
        });
    }

    /** The live session the cookie value names, marked as seen now; empty for none, an unknown or an expired one. */
    public Optional<Session> find(String cookie) {
        return find(cookie, true);
    }

    /** The same; {@code touch} false leaves its idle clock alone (a live stream reconnecting is not a person). */
    public Optional<Session> find(String cookie, boolean touch) {
        if (cookie == null || cookie.isEmpty()) return Optional.empty();
        String key = digest(cookie);
        Session s = sessions.get(key);
        if (s == null) return Optional.empty();
        Instant now = clock.instant();
        if (expired(s, now)) {
            end(key, s);
            return Optional.empty();
        }
        if (touch) s.lastSeen = now;
        return Optional.of(s);
    }

    /** Whether {@code s} is still logged in (not logged out, not expired); does not count as use. Live streams ask it. */
    public boolean isLive(Session s) {
        return !s.ended && !expired(s, clock.instant());
    }

    public void logout(String cookie) {
        if (cookie == null) return;
        String key = digest(cookie);
        Session s = sessions.get(key);
        if (s != null) end(key, s);
    }

    private void end(String key, Session s) {
        s.ended = true;
        sessions.remove(key);
    }

    int size() {
        return sessions.size();
    }

    private void expire() {
        Instant now = clock.instant();
        sessions.values().removeIf(s -> {
            if (!expired(s, now)) return false;
            s.ended = true;
            return true;
        });
    }

    private static boolean expired(Session s, Instant now) {
        return now.isAfter(s.lastSeen.plus(IDLE)) || now.isAfter(s.created.plus(LIFETIME));
    }

    private static String random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    private static String digest(String id) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(id.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }
}
