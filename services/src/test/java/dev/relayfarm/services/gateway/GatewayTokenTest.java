package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** relayfarm.tokens: names, roles, the admin token, and the start-up errors for a malformed list (which never show a token). */
class GatewayTokenTest {
    private static GatewayToken tokens(String admin, String named) {
        MockEnvironment env = new MockEnvironment().withProperty("relayfarm.tokens", named);
        if (admin != null) env.setProperty("relayfarm.token", admin);
        return new GatewayToken(env);
    }

    @Test
    void namedTokensHaveTheirRolesAndTheAdminTokenHasEvery() {
        GatewayToken t = tokens("root-secret", " alice:reviewer:tok-a , ci:submitter+operator:tok:with:colons ,,");
        Caller alice = t.authenticate("tok-a").orElseThrow();
        assertEquals("alice", alice.name());
        assertEquals(Set.of(Role.REVIEWER), alice.roles());
        assertEquals(GatewayToken.id("tok-a"), alice.tokenId());
        Caller ci = t.authenticate("tok:with:colons").orElseThrow();
        assertEquals(EnumSet.of(Role.SUBMITTER, Role.OPERATOR), ci.roles());
        Caller admin = t.authenticate("root-secret").orElseThrow();
        assertEquals(GatewayToken.ADMIN, admin.name());
        assertEquals(EnumSet.allOf(Role.class), admin.roles());
        assertTrue(t.authenticate("tok-b").isEmpty());
        assertTrue(t.authenticate("tok-").isEmpty(), "a prefix is not the token");
        assertTrue(t.authenticate(null).isEmpty());
        assertTrue(t.matches("tok-a"), "matches (the health endpoint's check) takes any configured token");
    }

    @Test
    void namedTokensAloneAreEnoughAndNoTokenAtAllLetsNobodyIn() {
        GatewayToken named = tokens(null, "bob:agent:agent-secret");
        assertTrue(named.configured());
        assertTrue(named.value().isEmpty(), "no admin token");
        assertEquals(Set.of(Role.AGENT), named.authenticate("agent-secret").orElseThrow().roles());
        GatewayToken none = tokens(null, "");
        assertFalse(none.configured());
        assertTrue(none.authenticate("").isEmpty());
    }

    @Test
    void aMalformedListStopsStartUpNamingTheEntryButNotItsToken() {
        assertStartUpError("bob:reviewer", "relayfarm.tokens entry 1: expected name:roles:token", null);
        assertStartUpError("a:reviewer:x1,bob:revewer:secret-1", "entry 2 ('bob'): unknown role 'revewer', expected one of submitter, reviewer, operator, agent",
                "secret-1");
        assertStartUpError("bob:reviewer:secret-1,bob:operator:secret-2", "the name 'bob' is used twice", "secret-2");
        assertStartUpError("admin:reviewer:secret-1", "the name 'admin' is the relayfarm.token's", "secret-1");
        assertStartUpError("a:reviewer:secret-1,b:operator:secret-1", "entry 2 ('b'): the same token as 'a'", "secret-1");
        assertStartUpError("a b:reviewer:secret-1", "the name must be letters", "secret-1");
        assertStartUpError("a:reviewer: ", "the token is empty", null);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> tokens("secret-9", "a:reviewer:secret-9"));
        assertTrue(e.getMessage().contains("is the admin token"), e.getMessage());
        assertFalse(e.getMessage().contains("secret-9"), e.getMessage());
    }

    private static void assertStartUpError(String spec, String expected, String secret) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> tokens(null, spec));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        if (secret != null) assertFalse(e.getMessage().contains(secret), "the message shows no token: " + e.getMessage());
    }
}
