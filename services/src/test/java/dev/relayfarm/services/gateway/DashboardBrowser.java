package dev.relayfarm.services.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A browser as far as the dashboard cares: it follows no redirect by itself (tests look at each one), keeps the session
 * cookie the login set and sends it back only where the cookie's {@code Path=/ui} says, and posts forms as
 * {@code application/x-www-form-urlencoded}. No cookie handler of the JDK's: the test sees exactly what is sent.
 */
final class DashboardBrowser {
    static final String COOKIE = "relayfarm_session";
    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private final int port;
    /** The session cookie's value; null before login and after a response that cleared it. */
    String session;

    DashboardBrowser(int port) {
        this.port = port;
    }

    /** A browser logged in with {@code token} (asserting that the login answered with a redirect and a cookie). */
    static DashboardBrowser loggedIn(int port, String token) {
        DashboardBrowser b = new DashboardBrowser(port);
        HttpResponse<String> r = b.login(token, null);
        if (r.statusCode() != 302 || b.session == null) throw new AssertionError("login: " + r.statusCode() + " " + r.headers().map() + " " + r.body());
        return b;
    }

    HttpResponse<String> login(String token, String next) {
        Map<String, String> form = new LinkedHashMap<>();
        if (token != null) form.put("token", token);
        if (next != null) form.put("next", next);
        return post("/ui/login", form);
    }

    HttpResponse<String> get(String path) {
        return send(request(path).GET().build());
    }

    /** POSTs {@code form} (fields in order) to {@code path}. */
    HttpResponse<String> post(String path, Map<String, String> form) {
        String body = form.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return send(request(path).header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    /** POSTs {@code form} plus the {@code _csrf} field a GET of {@code page} shows (what submitting that page's form sends). */
    HttpResponse<String> submit(String page, String action, Map<String, String> form) {
        Map<String, String> withCsrf = new LinkedHashMap<>(form);
        withCsrf.put("_csrf", csrf(page));
        return post(action, withCsrf);
    }

    /** The CSRF token in the forms of {@code page} (fails when the page has none). */
    String csrf(String page) {
        HttpResponse<String> r = get(page);
        if (r.statusCode() != 200) throw new AssertionError("GET " + page + ": " + r.statusCode() + " " + r.body());
        return csrfIn(r.body()).orElseThrow(() -> new AssertionError("no _csrf field on " + page + ": " + r.body()));
    }

    static Optional<String> csrfIn(String html) {
        Matcher m = CSRF.matcher(html);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        // the cookie's Path=/ui: /ui and what lies under it, nothing else (not /uix, not /api)
        if (session != null && (path.equals("/ui") || path.startsWith("/ui/") || path.startsWith("/ui?"))) b.header("Cookie", COOKIE + "=" + session);
        return b;
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            for (String c : r.headers().allValues("Set-Cookie")) {
                if (c.startsWith(COOKIE + "=")) {
                    String value = c.substring(COOKIE.length() + 1).split(";", 2)[0];
                    session = value.isEmpty() ? null : value;
                }
            }
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The Location header as a path and query of this server (a relative or an absolute one to localhost). */
    static String location(HttpResponse<?> r) {
        String l = r.headers().firstValue("Location").orElseThrow(() -> new AssertionError("no Location header: " + r.statusCode() + " " + r.headers().map()));
        URI u = URI.create(l);
        if (u.getHost() != null && !u.getHost().equals("localhost")) return l; // an absolute URL elsewhere: the caller's assert shows it
        return u.getRawPath() + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }

    HttpClient client() {
        return http;
    }
}
