package dev.relayfarm.services.kit;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches {@link ServiceRole} against {@code relayfarm.roles}; the roles are {@link Stage#roles}. */
final class RoleCondition implements Condition {
    private static final Set<String> ROLES = new LinkedHashSet<>(Stage.roles());

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        var attrs = metadata.getAnnotationAttributes(ServiceRole.class.getName());
        if (attrs == null) return true;
        String role = (String) attrs.get("value");
        // a misspelt role would leave its bean out of every process without a word
        if (!ROLES.contains(role)) throw new IllegalStateException("@ServiceRole(\"" + role + "\") on " + metadata + ": not a role, expected one of " + ROLES);
        return enabled(context.getEnvironment().getProperty("relayfarm.roles", "all")).contains(role);
    }

    static Set<String> enabled(String roles) {
        Set<String> named = Arrays.stream(roles.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        if (named.contains("all")) return ROLES;
        for (String r : named) {
            if (!ROLES.contains(r)) throw new IllegalArgumentException("relayfarm.roles: unknown role '" + r + "', expected one of " + ROLES + " or all");
        }
        return named;
    }
}
