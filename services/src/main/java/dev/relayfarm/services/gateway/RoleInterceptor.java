package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Component;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Enforces {@link RequiresRole}: after {@link BearerTokenFilter} let a valid token in and Spring MVC chose the
 * handler, a caller without the handler's role gets a 403 problem ({@link ProblemType#FORBIDDEN}) naming the role
 * needed, the caller and the roles it has (members {@code requiredRole}, {@code caller}, {@code callerRoles}). Checked
 * per handler rather than per path in the filter, so the rule sits on the code it guards and a new endpoint cannot
 * fall between two path patterns. The exception goes through {@link ProblemHandler} like any other.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class RoleInterceptor implements HandlerInterceptor {
    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(handler instanceof HandlerMethod method)) return true;
        Role needed = required(method);
        if (needed == null) return true;
        if (!(request.getAttribute(BearerTokenFilter.CALLER) instanceof Caller caller)) {
            // a role-guarded handler on a path the filter does not cover: refuse rather than run it for nobody
            throw new ApiProblem(ProblemType.FORBIDDEN, "this call needs the '" + needed.wireName() + "' role and came without a token",
                    Map.of("requiredRole", needed.wireName()));
        }
        if (caller.has(needed)) return true;
        String roles = caller.roles().stream().sorted().map(Role::wireName).collect(Collectors.joining(", "));
        throw new ApiProblem(ProblemType.FORBIDDEN, "this call needs the '" + needed.wireName() + "' role; the token '" + caller.name() + "' has "
                + (roles.isEmpty() ? "no role" : "the role(s) " + roles) + " (roles are configured in relayfarm.tokens)",
                Map.of("requiredRole", needed.wireName(), "caller", caller.name(),
                        "callerRoles", caller.roles().stream().sorted().map(Role::wireName).toList()));
    }

    /** The method's {@link RequiresRole}, else its controller's, else none. */
    static Role required(HandlerMethod method) {
        RequiresRole onMethod = AnnotatedElementUtils.findMergedAnnotation(method.getMethod(), RequiresRole.class);
        if (onMethod != null) return onMethod.value();
        RequiresRole onType = AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), RequiresRole.class);
        return onType == null ? null : onType.value();
    }
}
