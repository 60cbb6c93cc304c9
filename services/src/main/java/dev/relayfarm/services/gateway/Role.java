package dev.relayfarm.services.gateway;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What a gateway token may do ({@link GatewayToken}). A handler names the role it needs with {@link RequiresRole};
 * a handler without one (the reads of devices, schedules, tuning runs and records) needs only a valid token. The
 * {@code admin} token ({@code relayfarm.token}) has every role, so a farm configured with one token works as before.
 */
public enum Role {
    /** Submits, reads and cancels compile jobs. */
    SUBMITTER,
    /** Approves, rejects and pins proposed schedules; its token's name is the reviewer recorded with the decision. */
    REVIEWER,
    /** Drains devices, starts and cancels tuning runs, imports tuning records. */
    OPERATOR,
    /**
     * Hardware agents (register, heartbeat). Reserved: agents write PostgreSQL directly today, so no endpoint needs it
     * yet; the role exists so their tokens can be configured now and gain no other power later.
     */
    AGENT;

    /** The name in configuration and in problem bodies: lower case. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The role named {@code text} (any case); an {@link IllegalArgumentException} lists the roles there are. */
    public static Role of(String text) {
        for (Role r : values()) {
            if (r.wireName().equalsIgnoreCase(text.trim())) return r;
        }
        throw new IllegalArgumentException("unknown role '" + text.trim() + "', expected one of "
                + Arrays.stream(values()).map(Role::wireName).collect(Collectors.joining(", ")));
    }
}
