package dev.relayfarm.services.gateway;

import java.util.Set;

/**
 * Who made a gateway call: what {@link BearerTokenFilter} puts on the request once the token is valid. Never the
 * token itself.
 *
 * @param name    the token's configured name ({@code admin} for {@code relayfarm.token}): the reviewer recorded with a
 *                schedule decision, the creator of a tuning run
 * @param roles   what the token may do
 * @param tokenId {@link GatewayToken#id} of the token: what quotas and {@code jobs.token_id} are keyed by
 */
public record Caller(String name, Set<Role> roles, String tokenId) {
    public Caller {
        roles = Set.copyOf(roles);
    }

    public boolean has(Role role) {
        return roles.contains(role);
    }
}
