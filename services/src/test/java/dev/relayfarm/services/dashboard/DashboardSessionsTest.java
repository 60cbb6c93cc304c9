package dev.relayfarm.services.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.services.gateway.GatewayToken;
import dev.relayfarm.services.gateway.Role;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/**
 * Dashboard sessions: a valid token buys one (never a bad one), its id and CSRF token are random and per session, and
 * it ends after {@link DashboardSessions#IDLE} without a request or {@link DashboardSessions#LIFETIME} after login,
 * whichever comes first, or at logout.
 */
class DashboardSessionsTest {
    /** A clock the test moves. */
    static final class TestClock extends Clock {
        Instant now = Instant.parse("2026-11-26T08:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    private final TestClock clock = new TestClock();
    private final DashboardSessions sessions = new DashboardSessions(new GatewayToken(new MockEnvironment()
            .withProperty("relayfarm.token", "admin-token-1").withProperty("relayfarm.tokens", "rita:reviewer:rev-token-2")), clock);

    @Test
    void aValidTokenBuysASessionWithItsOwnIdAndCsrfToken() {
        assertTrue(sessions.login("wrong").isEmpty());
        assertTrue(sessions.login(null).isEmpty());
        assertTrue(sessions.login("").isEmpty());
        DashboardSessions.Session rita = sessions.login(" rev-token-2 ").orElseThrow();
        assertEquals("rita", rita.caller().name());
        assertTrue(rita.caller().has(Role.REVIEWER) && !rita.caller().has(Role.OPERATOR));
        DashboardSessions.Session again = sessions.login("rev-token-2").orElseThrow();
        assertNotEquals(rita.id(), again.id());
        assertNotEquals(rita.csrf(), again.csrf());
        assertFalse(rita.id().contains("rev-token-2"));
        assertTrue(rita.csrfMatches(rita.csrf()));
        assertFalse(rita.csrfMatches(again.csrf()));
        assertFalse(rita.csrfMatches(null));
        assertEquals("rita", sessions.find(rita.id()).orElseThrow().caller().name());
        assertTrue(sessions.find(rita.csrf()).isEmpty(), "the CSRF token is not a session id");
        assertTrue(sessions.find(null).isEmpty());
        assertTrue(sessions.find("").isEmpty());
    }

    @Test
    void anIdleSessionEnds() {
        String id = sessions.login("admin-token-1").orElseThrow().id();
        clock.advance(DashboardSessions.IDLE);
        assertTrue(sessions.find(id).isPresent(), "exactly the idle time: still alive, and seen now");
        clock.advance(DashboardSessions.IDLE.minusSeconds(1));
        assertTrue(sessions.find(id).isPresent(), "each request starts the idle time again");
        clock.advance(DashboardSessions.IDLE.plusSeconds(1));
        assertTrue(sessions.find(id).isEmpty());
        assertEquals(0, sessions.size(), "an expired session is forgotten when it is looked up");
    }

    @Test
    void aBusySessionEndsAfterItsLifetime() {
        String id = sessions.login("admin-token-1").orElseThrow().id();
        Duration step = Duration.ofHours(1);
        for (Duration used = Duration.ZERO; used.compareTo(DashboardSessions.LIFETIME) < 0; used = used.plus(step)) {
            clock.advance(step);
            if (used.plus(step).compareTo(DashboardSessions.LIFETIME) <= 0) assertTrue(sessions.find(id).isPresent(), "after " + used.plus(step));
        }
        clock.advance(Duration.ofSeconds(1));
        assertTrue(sessions.find(id).isEmpty(), "used every hour, yet over after " + DashboardSessions.LIFETIME);
    }

    @Test
    void expiredSessionsAreSweptAtTheNextLoginAndLogoutEndsOne() {
        sessions.login("admin-token-1").orElseThrow();
        sessions.login("admin-token-1").orElseThrow();
        clock.advance(DashboardSessions.IDLE.plusSeconds(1));
        String fresh = sessions.login("admin-token-1").orElseThrow().id();
        assertEquals(1, sessions.size(), "the two idle ones went when the next login came");
        sessions.logout(fresh);
        sessions.logout(null);
        assertTrue(sessions.find(fresh).isEmpty());
        assertEquals(0, sessions.size());
    }
}
