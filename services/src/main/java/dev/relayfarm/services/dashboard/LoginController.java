package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.gateway.Caller;
import dev.relayfarm.services.gateway.Role;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseCookie;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.view.RedirectView;

/**
 * The dashboard's login form and logout. A good token gets a session cookie (HttpOnly: page scripts cannot read it;
 * SameSite=Strict: another site's page cannot send it; Secure behind HTTPS) and a redirect to where the browser was
 * going; a bad one the form again with a 401 and what was wrong. {@code /ui} itself sends each role to its first page.
 */
@Controller
@ServiceRole(Stage.GATEWAY)
public class LoginController {
    private static final Logger log = LoggerFactory.getLogger(LoginController.class);
    /** Where a login without a (safe) destination goes: {@link #home}, which knows the caller's roles. */
    static final String HOME = "/ui/";
    private final DashboardSessions sessions;

    public LoginController(DashboardSessions sessions) {
        this.sessions = sessions;
    }

    /** The first page a role needs: jobs for a submitter, the review queue for a reviewer, else the farm. */
    @GetMapping({"/ui", "/ui/"})
    String home(@RequestAttribute(name = BearerTokenFilter.CALLER, required = false) Caller caller) {
        if (caller != null && caller.has(Role.SUBMITTER)) return "redirect:/ui/jobs";
        if (caller != null && caller.has(Role.REVIEWER)) return "redirect:/ui/schedules";
        return "redirect:/ui/farm";
    }

    @GetMapping("/ui/login")
    String form(@RequestParam(name = "next", required = false) String next, Model model) {
        model.addAttribute("next", safeNext(next));
        return "ui/login";
    }

    @PostMapping("/ui/login")
    Object login(@RequestParam(name = "token", required = false) String token, @RequestParam(name = "next", required = false) String next,
                 HttpServletRequest request, HttpServletResponse response, Model model) {
        if (crossSite(request)) {
            // login CSRF: another site's page must not log this browser in (with that site's own token, say)
            response.setStatus(HttpStatus.FORBIDDEN.value());
            model.addAttribute("next", HOME);
            model.addAttribute("error", "The login form was sent from another site (Origin " + request.getHeader(HttpHeaders.ORIGIN)
                    + "); log in from this page.");
            return "ui/login";
        }
        // a new login ends the browser's old session, whoever it was: no session lingers behind the one in use
        sessions.logout(DashboardFilter.cookie(request));
        Optional<DashboardSessions.Session> session = sessions.login(token);
        if (session.isEmpty()) {
            response.setStatus(HttpStatus.UNAUTHORIZED.value());
            model.addAttribute("next", safeNext(next));
            model.addAttribute("error", token == null || token.isBlank() ? "Enter a token." : "That token is not valid here.");
            return "ui/login";
        }
        response.addHeader(HttpHeaders.SET_COOKIE, cookie(session.get().id(), request.isSecure(), DashboardSessions.LIFETIME.toSeconds()).toString());
        log.info("dashboard login: {}", session.get().caller().name());
        // the path as it is: a '{' in it is no URI template to expand (RedirectView would try, and fail)
        RedirectView to = new RedirectView(safeNext(next), true);
        to.setExpandUriTemplateVariables(false);
        return to;
    }

    @PostMapping("/ui/logout")
    String logout(HttpServletRequest request, HttpServletResponse response) {
        sessions.logout(DashboardFilter.cookie(request));
        response.addHeader(HttpHeaders.SET_COOKIE, cookie("", request.isSecure(), 0).toString());
        return "redirect:/ui/login";
    }

    private static ResponseCookie cookie(String value, boolean secure, long maxAgeSeconds) {
        return ResponseCookie.from(DashboardFilter.COOKIE, value).httpOnly(true).sameSite("Strict").secure(secure).path("/ui")
                .maxAge(maxAgeSeconds).build();
    }

    /**
     * Whether the browser says the form came from another origin than this server (browsers send Origin with a POST; a
     * client that sends none, curl say, is not a browser a page could have driven).
     */
    static boolean crossSite(HttpServletRequest request) {
        // browsers that send Fetch Metadata say so outright
        if ("cross-site".equals(request.getHeader("Sec-Fetch-Site"))) return true;
        String origin = request.getHeader(HttpHeaders.ORIGIN);
        if (origin == null) return false;
        String host = request.getHeader(HttpHeaders.HOST);
        try {
            String authority = java.net.URI.create(origin).getAuthority();
            return host == null || authority == null || !authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    /**
     * Only a dashboard path of this server: a login link cannot send the browser elsewhere (no open redirect). No
     * control characters either: a CR or LF would end the Location header wherever the container let it through (the
     * check should not rest on the container), and browsers drop tabs and newlines from a URL before resolving it.
     */
    static String safeNext(String next) {
        if (next == null || !next.startsWith("/ui/") || next.startsWith("//") || next.contains("\\") || next.startsWith("/ui/login")
                || next.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) return HOME;
        return next;
    }
}
