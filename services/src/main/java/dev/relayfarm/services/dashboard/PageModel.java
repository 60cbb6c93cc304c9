package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.gateway.Caller;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What every dashboard template may use besides its page's data: {@code fmt} ({@link Formats}), {@code caller} (who is
 * logged in: the header, and which actions to offer) and {@code csrf} (the forms' token). Pages get them through
 * {@link DashboardErrors}; a live stream ({@link LiveFragments}) renders outside Spring MVC and adds them here, taken
 * from the request that opened it.
 */
final class PageModel {
    static final Formats FORMATS = new Formats(Clock.systemUTC());

    private PageModel() {}

    static Map<String, Object> common(HttpServletRequest request) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("fmt", FORMATS);
        if (request.getAttribute(BearerTokenFilter.CALLER) instanceof Caller caller) m.put("caller", caller);
        if (request.getAttribute(DashboardFilter.SESSION) instanceof DashboardSessions.Session s) m.put("csrf", s.csrf());
        return m;
    }

    /** The session of a request the dashboard's filter let through. */
    static DashboardSessions.Session session(HttpServletRequest request) {
        if (request.getAttribute(DashboardFilter.SESSION) instanceof DashboardSessions.Session s) return s;
        throw new IllegalStateException("no dashboard session on " + request.getRequestURI() + ": not behind DashboardFilter");
    }

    /** {@code data} with the common variables of the request that opened a live stream. */
    static Map<String, Object> with(Map<String, Object> common, Map<String, Object> data) {
        Map<String, Object> m = new LinkedHashMap<>(common);
        m.putAll(data);
        return m;
    }
}
