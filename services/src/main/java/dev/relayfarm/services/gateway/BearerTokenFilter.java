package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Optional;
import java.util.Set;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Requires {@code Authorization: Bearer <token>} ({@link GatewayToken}) on {@code /api/v1/**}, except the API
 * description and its docs page, which are public so a client can learn how to authenticate. Runs before Spring MVC
 * (and before the multipart body is read), so an unauthenticated upload is refused without being stored. A valid token
 * puts its {@link Caller} on the request; whether that caller may make this call is {@link RoleInterceptor}'s
 * question (a 403, not a 401: the token is good, its roles are not enough).
 */
@Component
@ServiceRole(Stage.GATEWAY)
@Order(Ordered.HIGHEST_PRECEDENCE + 20)
public class BearerTokenFilter extends OncePerRequestFilter {
    /** The request attribute holding the caller's token id ({@link GatewayToken#id}). */
    static final String TOKEN_ID = "relayfarm.tokenId";
    /** The request attribute holding the {@link Caller}: the token's name and roles ({@link RoleInterceptor} checks them). */
    public static final String CALLER = "relayfarm.caller";
    static final Set<String> PUBLIC = Set.of("/api/v1/openapi.json", "/api/v1/docs", "/api/v1/health");

    private final GatewayToken token;
    private final ObjectMapper json;

    public BearerTokenFilter(GatewayToken token, ObjectMapper json) {
        this.token = token;
        this.json = json;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = path(request);
        return !path.startsWith("/api/v1/") && !path.equals("/api/v1") || PUBLIC.contains(path);
    }

    /**
     * The decoded, normalized path the request is dispatched on (servlet path + path info), not the raw request URI:
     * {@code /%61pi/v1/jobs} or {@code /api/v1/docs/..;/jobs} must not look public while Spring MVC routes them to a
     * protected handler.
     */
    public static String path(HttpServletRequest request) {
        String info = request.getPathInfo();
        return request.getServletPath() + (info == null ? "" : info);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String header = request.getHeader(HttpHeaders.AUTHORIZATION);
        String why;
        Optional<Caller> caller = Optional.empty();
        if (!token.configured()) {
            why = "the server has no API token configured (set RELAYFARM_TOKEN or relayfarm.token, or RELAYFARM_TOKENS, or run with relayfarm.local=true)";
        } else if (header == null || header.isBlank()) {
            why = "missing Authorization header (expected 'Authorization: Bearer <token>')";
        } else if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            why = "the Authorization header is not a Bearer token (expected 'Authorization: Bearer <token>')";
        } else {
            caller = token.authenticate(header.substring(7).trim());
            why = "the bearer token is not valid";
        }
        if (caller.isPresent()) {
            // who is calling: for roles (RoleInterceptor), reviewer names, and per-token quotas (JobsController); never the token
            request.setAttribute(CALLER, caller.get());
            request.setAttribute(TOKEN_ID, caller.get().tokenId());
            chain.doFilter(request, response);
            return;
        }
        response.setStatus(HttpStatus.UNAUTHORIZED.value());
        response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"relayfarm\"");
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        var problem = ApiProblem.problem(ProblemType.UNAUTHORIZED, why);
        problem.setInstance(java.net.URI.create(path(request)));
        json.writeValue(response.getOutputStream(), problem);
    }
}
