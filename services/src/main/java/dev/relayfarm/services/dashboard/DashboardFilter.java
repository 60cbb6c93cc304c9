package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Who is calling a dashboard page ({@code /ui/**}): the session its cookie names ({@link DashboardSessions}), else a
 * redirect to the login form (a GET) or a 401 (anything else). A state-changing request (POST) must also carry the
 * session's CSRF token, as the form field {@value #CSRF_FIELD} or the header {@value #CSRF_HEADER}: a page of another
 * site cannot read it, so it cannot make a logged-in browser approve a schedule (SameSite=Strict is the second lock).
 * The caller goes on the request under {@link BearerTokenFilter#CALLER}, as for the API, so {@code @RequiresRole}
 * guards dashboard handlers the same way.
 */
@Component
@ServiceRole(Stage.GATEWAY)
@Order(Ordered.HIGHEST_PRECEDENCE + 21)
public class DashboardFilter extends OncePerRequestFilter {
    public static final String COOKIE = "relayfarm_session";
    static final String CSRF_FIELD = "_csrf";
    static final String CSRF_HEADER = "X-CSRF-Token";
    /** The request attribute holding the {@link DashboardSessions.Session}. */
    static final String SESSION = "relayfarm.dashboardSession";
    private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

    private final DashboardSessions sessions;

    public DashboardFilter(DashboardSessions sessions) {
        this.sessions = sessions;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = BearerTokenFilter.path(request);
        return !(path.equals("/ui") || path.startsWith("/ui/")) || path.startsWith("/ui/assets/");
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String path = BearerTokenFilter.path(request);
        // no other page may frame these (a framed Approve button is a click away from a decision), none is cached
        // (they carry the CSRF token), scripts and styles come from this server only (inline style attributes: the bars)
        response.setHeader("X-Frame-Options", "DENY");
        response.setHeader("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:;"
                + " frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
        response.setHeader("Cache-Control", "no-store");
        response.setHeader("Referrer-Policy", "same-origin");
        response.setHeader("X-Content-Type-Options", "nosniff");
        if (path.equals("/ui/login")) {
            chain.doFilter(request, response);
            return;
        }
        // a live stream's reconnects are no sign of a person: they must not keep an idle session alive
        Optional<DashboardSessions.Session> session = sessions.find(cookie(request), !path.endsWith("/live"));
        boolean safe = SAFE.contains(request.getMethod());
        if (session.isEmpty()) {
            if (safe) {
                String query = request.getQueryString();
                String next = BearerTokenFilter.path(request) + (query == null ? "" : "?" + query);
                response.setStatus(HttpStatus.SEE_OTHER.value());
                response.setHeader(HttpHeaders.LOCATION, "/ui/login?next=" + URLEncoder.encode(next, StandardCharsets.UTF_8));
            } else {
                refuse(response, HttpStatus.UNAUTHORIZED, "Not logged in, or the session expired: log in again at /ui/login.");
            }
            return;
        }
        if (!safe) {
            String presented = request.getHeader(CSRF_HEADER);
            if (presented == null) presented = request.getParameter(CSRF_FIELD);
            if (!session.get().csrfMatches(presented)) {
                refuse(response, HttpStatus.FORBIDDEN, "The request carried no valid CSRF token (form field _csrf or header X-CSRF-Token): "
                        + "reload the page and try again.");
                return;
            }
        }
        request.setAttribute(SESSION, session.get());
        request.setAttribute(BearerTokenFilter.CALLER, session.get().caller());
        chain.doFilter(request, response);
    }

    static String cookie(HttpServletRequest request) {
        Cookie[] cookies = request.getCookies();
        if (cookies == null) return null;
        for (Cookie c : cookies) {
            if (c.getName().equals(COOKIE)) return c.getValue();
        }
        return null;
    }

    private static void refuse(HttpServletResponse response, HttpStatus status, String why) throws IOException {
        response.setStatus(status.value());
        response.setContentType("text/html;charset=UTF-8");
        response.getWriter().write("<!doctype html><title>" + status.value() + "</title><p>" + why + "</p><p><a href=\"/ui/login\">Log in</a></p>");
    }
}
