package dev.relayfarm.services.gateway;

import static dev.relayfarm.services.gateway.DashboardBrowser.location;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The dashboard ({@code /ui/**}) as a browser uses it, over HTTP against the real gateway: login and its cookie, the
 * redirect guard, CSRF, roles on the pages and their forms, the review queue's filters and what it says new jobs get,
 * the farm page with its drain and live stream, and logout. Every state change is checked in the database too.
 */
class DashboardTest extends GatewayTestBase {
    private static final Pattern QUEUE_ROW = Pattern.compile("<tr data-schedule=\"(\\d+)\">(.*?)</tr>", Pattern.DOTALL);
    private static final Pattern PROBLEM = Pattern.compile("id=\"problem\"[^>]*>(.*?)</p>", Pattern.DOTALL);

    /** Without a session a page asks for the login (and remembers where it was going); a POST is refused outright. */
    @Test
    void withoutASessionPagesRedirectToTheLoginAndPostsAreRefused() {
        DashboardBrowser anonymous = new DashboardBrowser(port);
        HttpResponse<String> page = anonymous.get("/ui/schedules");
        assertEquals(303, page.statusCode());
        assertEquals("/ui/login?next=%2Fui%2Fschedules", location(page));
        assertEquals("/ui/login?next=%2Fui%2Fschedules%3Fstatus%3DAPPROVED%26deviceClass%3Dx", location(anonymous.get("/ui/schedules?status=APPROVED&deviceClass=x")));

        long id = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-anon"), "cpu-anon", 10, 20, 2, "w");
        HttpResponse<String> post = anonymous.post("/ui/schedules/" + id + "/approve", Map.of("_csrf", "guess"));
        assertEquals(401, post.statusCode());
        assertTrue(post.body().contains("Not logged in"), post.body());
        anonymous.session = "made-up-session-id";
        assertEquals(401, anonymous.post("/ui/schedules/" + id + "/approve", Map.of()).statusCode(), "an unknown cookie is no session");
        assertEquals(303, anonymous.get("/ui/farm").statusCode());
        assertEquals("PENDING", status(id));

        // the login form itself, and the API with its bearer tokens, are outside the dashboard's session
        assertEquals(200, anonymous.get("/ui/login").statusCode());
        assertEquals(200, get("/api/v1/schedules/" + id).statusCode());
    }

    /**
     * A bad token gets the form again with a 401 and what was wrong; a good one an HttpOnly, SameSite=Strict cookie for
     * /ui that is not the token, and a redirect that never leaves this server.
     */
    @Test
    void loginSetsAStrictHttpOnlyCookieAndRedirectsOnlyWithinTheDashboard() {
        DashboardBrowser b = new DashboardBrowser(port);
        HttpResponse<String> bad = b.login("not-a-token", "/ui/farm");
        assertEquals(401, bad.statusCode());
        assertTrue(bad.body().contains("That token is not valid here."), bad.body());
        assertTrue(bad.body().contains("name=\"token\""), "the form again: " + bad.body());
        assertTrue(bad.body().contains("name=\"next\" value=\"/ui/farm\""), "it still knows where the browser was going: " + bad.body());
        assertTrue(bad.headers().allValues("Set-Cookie").isEmpty());
        HttpResponse<String> empty = b.login(" ", null);
        assertEquals(401, empty.statusCode());
        assertTrue(empty.body().contains("Enter a token."), empty.body());
        assertNull(b.session);

        HttpResponse<String> good = b.login(REVIEWER, "/ui/schedules?status=APPROVED");
        assertEquals(302, good.statusCode());
        assertEquals("/ui/schedules?status=APPROVED", location(good));
        String cookie = good.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("relayfarm_session=")).findFirst().orElseThrow();
        for (String part : List.of("HttpOnly", "SameSite=Strict", "Path=/ui")) assertTrue(cookie.contains(part), part + " in " + cookie);
        assertFalse(cookie.contains("Secure"), "plain HTTP here: a Secure cookie would never come back: " + cookie);
        assertTrue(b.session.length() >= 32, cookie);
        assertFalse(cookie.contains(REVIEWER), "the cookie is not the token: " + cookie);
        HttpResponse<String> page = b.get("/ui/schedules");
        assertEquals(200, page.statusCode());
        assertTrue(page.body().contains("rita"), "the header names who is logged in");
        assertFalse(page.body().contains(REVIEWER), "the token is never written to a page");

        // no open redirect: only a path under /ui/ of this server
        for (String evil : List.of("https://evil.example/", "//evil", "/\\evil.example", "/ui/login?next=//evil", "javascript:alert(1)")) {
            HttpResponse<String> r = new DashboardBrowser(port).login(REVIEWER, evil);
            assertEquals(302, r.statusCode(), evil);
            assertEquals("/ui/", location(r), evil);
        }
        // a header cannot be smuggled in through the redirect
        HttpResponse<String> crlf = new DashboardBrowser(port).login(REVIEWER, "/ui/jobs\r\nX-Evil: 1");
        assertTrue(crlf.headers().firstValue("X-Evil").isEmpty(), crlf.headers().map().toString());
        assertEquals("/ui/", location(crlf));
    }

    /** A state-changing POST with the session cookie but not the session's CSRF token changes nothing. */
    @Test
    void aDecisionNeedsTheSessionsCsrfToken() {
        long id = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-csrf"), "cpu-csrf", 10, 20, 2, "w");
        DashboardBrowser rita = DashboardBrowser.loggedIn(port, REVIEWER);
        DashboardBrowser other = DashboardBrowser.loggedIn(port, REVIEWER);
        String page = "/ui/schedules/" + id;

        HttpResponse<String> none = rita.post(page + "/approve", Map.of("note", "looks fine"));
        assertEquals(403, none.statusCode());
        assertTrue(none.body().contains("CSRF"), none.body());
        assertEquals(403, rita.post(page + "/approve", Map.of("_csrf", "forged")).statusCode());
        assertEquals(403, rita.post(page + "/approve", Map.of("_csrf", other.csrf(page))).statusCode(), "another session's token is not this one's");
        assertEquals("PENDING", status(id));
        assertEquals(List.of("PROPOSED/w"), history(id));

        String csrf = rita.csrf(page);
        assertNotEquals(csrf, other.csrf(page));
        HttpResponse<String> ok = rita.post(page + "/approve", Map.of("_csrf", csrf, "note", "looks fine"));
        assertEquals(302, ok.statusCode(), ok.body());
        assertEquals(page, location(ok));
        assertEquals("APPROVED", status(id));
        // the header works as well as the field (htmx requests send it)
        HttpResponse<String> byHeader = rita.send(rita.request(page + "/pin").header("X-CSRF-Token", csrf).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("note=keep")).build());
        assertEquals(302, byHeader.statusCode(), byHeader.body());
        assertEquals("PINNED", status(id));
    }

    /** A submitter reads a schedule's page but is offered no decision, and a forged one is refused naming the role. */
    @Test
    void aSubmitterSeesTheScheduleButCannotDecide() {
        long id = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-sub"), "cpu-sub", 10, 20, 2, "w");
        DashboardBrowser sam = DashboardBrowser.loggedIn(port, SUBMITTER);
        HttpResponse<String> page = sam.get("/ui/schedules/" + id);
        assertEquals(200, page.statusCode());
        assertTrue(page.body().contains("has no reviewer role"), page.body());
        for (String button : List.of("approve", "reject", "pin")) {
            assertTrue(Pattern.compile("<button id=\"" + button + "\"[^>]*disabled").matcher(page.body()).find(), button + " is disabled");
        }

        HttpResponse<String> approve = sam.submit("/ui/schedules/" + id, "/ui/schedules/" + id + "/approve", Map.of());
        assertEquals(403, approve.statusCode());
        assertTrue(approve.headers().firstValue("Content-Type").orElse("").startsWith("text/html"), "a page, not problem+json");
        String problem = problem(approve);
        assertTrue(problem.contains("needs the 'reviewer' role") && problem.contains("'sam'"), problem);
        assertEquals("PENDING", status(id));
        assertEquals(List.of("PROPOSED/w"), history(id));

        DashboardBrowser rita = DashboardBrowser.loggedIn(port, REVIEWER);
        String asReviewer = rita.get("/ui/schedules/" + id).body();
        assertFalse(asReviewer.contains("has no reviewer role"));
        assertFalse(Pattern.compile("<button id=\"approve\"[^>]*disabled").matcher(asReviewer).find(), "a reviewer's approve button works");
    }

    /**
     * A reviewer's four actions through the forms: each redirects to the schedule's page, updates the row with the
     * session's name and appends history; a rejection needs a reason; unpinning what is not pinned is a 409 page.
     */
    @Test
    void aReviewerApprovesRejectsPinsAndUnpins() {
        String workload = FarmRows.uniqueId("dense-rev");
        long id = FarmRows.proposed(jdbc, workload, "cpu-rev", 10, 20, 2, "worker-3");
        String page = "/ui/schedules/" + id;
        DashboardBrowser rita = DashboardBrowser.loggedIn(port, REVIEWER);
        assertEquals("the template default (this schedule is PENDING)", newJobsGet(rita.get(page).body()));

        HttpResponse<String> approve = rita.submit(page, page + "/approve", Map.of("note", " fast everywhere "));
        assertEquals(302, approve.statusCode(), approve.body());
        assertEquals(page, location(approve));
        assertEquals(Map.of("status", "APPROVED", "reviewer", "rita", "note", "fast everywhere"),
                jdbc.queryForMap("SELECT status, reviewer, note FROM schedules WHERE id = ?", id));
        assertEquals(List.of("PROPOSED/worker-3", "APPROVED/rita"), history(id));
        String approved = rita.get(location(approve)).body();
        assertTrue(approved.contains("id=\"schedule-status\"") && approved.contains(">APPROVED</span>"), approved);
        assertTrue(newJobsGet(approved).contains("this schedule"), newJobsGet(approved));

        for (String blank : List.of("", "   ")) {
            HttpResponse<String> noReason = rita.submit(page, page + "/reject", Map.of("note", blank));
            assertEquals(400, noReason.statusCode());
            assertTrue(problem(noReason).contains("needs a reason"), problem(noReason));
        }
        assertEquals("APPROVED", status(id));

        assertEquals(302, rita.submit(page, page + "/reject", Map.of("note", "wrong on odd batch sizes")).statusCode());
        assertEquals(Map.of("status", "REJECTED", "note", "wrong on odd batch sizes"), jdbc.queryForMap("SELECT status, note FROM schedules WHERE id = ?", id));
        assertTrue(newJobsGet(rita.get(page).body()).contains("the template default"));

        assertEquals(302, rita.submit(page, page + "/pin", Map.of()).statusCode());
        assertEquals("PINNED", status(id));
        String pinned = rita.get(page).body();
        assertTrue(pinned.contains("action=\"/ui/schedules/" + id + "/unpin\"") && pinned.contains("id=\"unpin\""), "a pinned schedule offers unpin");

        assertEquals(302, rita.submit(page, page + "/unpin", Map.of("note", "measure it again")).statusCode());
        assertEquals("APPROVED", status(id));
        assertEquals(List.of("PROPOSED/worker-3", "APPROVED/rita", "REJECTED/rita", "PINNED/rita", "UNPINNED/rita"), history(id));
        assertEquals("measure it again", jdbc.queryForObject("SELECT note FROM schedule_history WHERE schedule_id = ? AND action = 'UNPINNED'", String.class, id));

        HttpResponse<String> again = rita.submit(page, page + "/unpin", Map.of());
        assertEquals(409, again.statusCode());
        assertTrue(problem(again).contains("is APPROVED, not PINNED"), problem(again));
        assertEquals(5, history(id).size(), "a refused unpin leaves no history");

        assertEquals(400, rita.submit(page, page + "/promote", Map.of()).statusCode());
        HttpResponse<String> missing = rita.submit(page, "/ui/schedules/999999999/approve", Map.of());
        assertEquals(404, missing.statusCode());
        assertTrue(problem(missing).contains("no schedule with id 999999999"));
        assertEquals(404, rita.get("/ui/schedules/999999999").statusCode());
        assertEquals(400, rita.get("/ui/schedules/abc").statusCode());
    }

    /**
     * The review queue's filters select the right rows; a bad filter is a 400 page naming it; the "models" column shows
     * the runs that tuned a workload with its share; "new jobs get" follows the apply-best rule (pinned, approved and
     * not slower, an old class-less row, else the template default).
     */
    @Test
    void theReviewQueueFiltersAndSaysWhatNewJobsGet() {
        String cls = FarmRows.uniqueId("cpu-queue");
        String wFast = FarmRows.uniqueId("dense-q-fast"), wSlow = FarmRows.uniqueId("dense-q-slow");
        long fast = FarmRows.proposed(jdbc, wFast, cls, 10, 20, 2, "w");                       // 2.0x, PENDING
        long slow = FarmRows.proposed(jdbc, wSlow, cls, 19, 20, 2, "w");                       // 1.05x, PENDING
        long approved = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-q-ok"), cls, 8, 20, 2, "w");      // 2.5x
        long pinned = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-q-pin"), cls, 25, 20, 2, "w");     // 0.8x, pinned all the same
        long rejected = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-q-no"), cls, 5, 20, 2, "w");     // 4.0x
        long slower = FarmRows.proposed(jdbc, FarmRows.uniqueId("dense-q-slower"), cls, 30, 20, 2, "w");  // approved, 0.67x
        long otherClass = FarmRows.proposed(jdbc, wFast, cls + "-other", 10, 20, 2, "w");
        // a row from before schedules had a device class stands for every class's device
        long legacy = FarmRows.proposed(jdbc, wSlow, "unknown", 12, 20, 2, "w");
        for (long s : List.of(approved, slower, legacy)) decide(s, "approve", null);
        decide(pinned, "pin", null);
        decide(rejected, "reject", "{\"note\": \"no\"}");
        // a model's tuning run that tuned two of the workloads: 3 calls x 20 us and 1 call x 40 us of its 100
        long run = tunedRun("resnet-queue", cls, Map.of(wFast, new double[] {3, 20}, jdbc.queryForObject(
                "SELECT workload_key FROM schedules WHERE id = ?", String.class, approved), new double[] {1, 40}));

        DashboardBrowser b = DashboardBrowser.loggedIn(port, SUBMITTER);
        String q = "/ui/schedules?deviceClass=" + cls;
        assertEquals(Set.of(fast, slow), rows(b.get(q)).keySet(), "PENDING unless asked otherwise");
        assertEquals(Set.of(approved, slower), rows(b.get(q + "&status=approved")).keySet());
        assertEquals(Set.of(pinned), rows(b.get(q + "&status=PINNED")).keySet());
        Map<Long, String> all = rows(b.get(q + "&status="));
        assertEquals(Set.of(fast, slow, approved, pinned, rejected, slower), all.keySet(), "'' is every status");
        assertTrue(b.get(q + "&status=").body().contains("6 shown"));
        assertEquals(Set.of(fast, approved, rejected), rows(b.get(q + "&status=&minSpeedup=1.5")).keySet());
        assertEquals(Set.of(), rows(b.get(q + "&status=&minSpeedup=5")).keySet());
        assertTrue(rows(b.get("/ui/schedules?status=&deviceClass=" + cls + "-other")).containsKey(otherClass));
        assertEquals(all.keySet(), rows(b.get(q + "&status=&target=c%20%20-mcpu%3Dnative")).keySet(), "the target is compared in canonical form");
        assertEquals(Set.of(), rows(b.get(q + "&status=&target=c%20-mcpu%3Dx86-64-v3")).keySet());
        HttpResponse<String> badTarget = b.get(q + "&target=cuda%20-arch%3D%3F");
        assertEquals(400, badTarget.statusCode(), badTarget.body());
        assertTrue(problem(badTarget).startsWith("target: "), problem(badTarget));

        assertEquals("template default", newJobsCell(all.get(fast)));
        assertEquals("#" + legacy + " (APPROVED)", newJobsCell(all.get(slow)), "the old class-less approved row applies");
        assertEquals("this schedule", newJobsCell(all.get(approved)));
        assertEquals("this schedule", newJobsCell(all.get(pinned)), "a pin applies even when measured slower");
        assertEquals("template default", newJobsCell(all.get(rejected)));
        assertEquals("template default", newJobsCell(all.get(slower)), "approved but slower than the default does not apply");

        assertTrue(text(all.get(fast)).contains("resnet-queue 60.0%"), text(all.get(fast)));
        assertTrue(text(all.get(approved)).contains("resnet-queue 40.0%"), text(all.get(approved)));
        assertFalse(text(all.get(slow)).contains("resnet-queue"));
        assertTrue(text(all.get(fast)).contains("2.00×") && text(all.get(fast)).contains("10.0 µs") && text(all.get(fast)).contains("20.0 µs"), text(all.get(fast)));
        assertTrue(text(all.get(approved)).contains("by rita"));
        assertTrue(b.get("/ui/schedules/" + fast).body().contains("resnet-queue"), "the schedule page lists the model of run " + run);

        for (String[] bad : List.of(new String[] {"status=MAYBE", "got 'MAYBE'"}, new String[] {"minSpeedup=fast", "got 'fast'"},
                new String[] {"minSpeedup=0", "got '0'"}, new String[] {"minSpeedup=-1", "got '-1'"}, new String[] {"minSpeedup=NaN", "got 'NaN'"})) {
            HttpResponse<String> r = b.get("/ui/schedules?" + bad[0]);
            assertEquals(400, r.statusCode(), bad[0]);
            String problem = problem(r);
            assertTrue(problem.contains(bad[0].startsWith("status") ? "status must be one of" : "speedup") && problem.contains(bad[1]), bad[0] + ": " + problem);
        }
    }

    /**
     * The farm page lists every registered device by class; an operator drains one (a submitter may not), and the
     * live stream sends the devices fragment, with the operator's drain form, as an SSE event.
     */
    @Test
    void theFarmPageListsDevicesDrainsAndStreamsThem() throws Exception {
        String cls = FarmRows.uniqueId("cpu-farm");
        String a = FarmRows.uniqueId("host-1/a"), c = FarmRows.uniqueId("host-1/c"), off = FarmRows.uniqueId("host-1/off");
        FarmRows.device(jdbc, a, cls, "ONLINE", 2);
        FarmRows.device(jdbc, c, cls, "ONLINE", 3);
        FarmRows.device(jdbc, off, cls, "OFFLINE", 600);
        Set<String> ours = Set.of(a, c, off);

        DashboardBrowser otto = DashboardBrowser.loggedIn(port, OPERATOR);
        String farm = otto.get("/ui/farm").body();
        assertTrue(farm.contains("data-class=\"" + cls + "\""), farm);
        for (String d : List.of(a, c, off)) assertTrue(farm.contains("data-device=\"" + d + "\""), d);
        assertEquals(Set.of(a, c), drainable(farm, ours), "a drain form for each ONLINE device of the class");
        assertFalse(farm.contains("has no operator role"));

        DashboardBrowser sam = DashboardBrowser.loggedIn(port, SUBMITTER);
        String asSubmitter = sam.get("/ui/farm").body();
        assertTrue(asSubmitter.contains("has no operator role"));
        assertEquals(Set.of(), drainable(asSubmitter, ours));
        HttpResponse<String> refused = sam.submit("/ui/farm", "/ui/farm/drain", Map.of("device", a));
        assertEquals(403, refused.statusCode());
        assertTrue(problem(refused).contains("needs the 'operator' role"), problem(refused));
        assertEquals("ONLINE", deviceStatus(a));

        HttpResponse<String> drained = otto.submit("/ui/farm", "/ui/farm/drain", Map.of("device", a));
        assertEquals(302, drained.statusCode(), drained.body());
        assertEquals("/ui/farm", location(drained));
        assertEquals("DRAINING", deviceStatus(a));
        assertEquals("ONLINE", deviceStatus(c));
        assertEquals(Set.of(c), drainable(otto.get("/ui/farm").body(), ours));
        assertEquals(409, otto.submit("/ui/farm", "/ui/farm/drain", Map.of("device", off)).statusCode(), "no agent to drain");
        assertEquals("OFFLINE", deviceStatus(off));
        assertEquals(404, otto.submit("/ui/farm", "/ui/farm/drain", Map.of("device", "nobody/here")).statusCode());

        String devices = awaitEvent(otto, "/ui/farm/live", "devices", Duration.ofSeconds(10), "data-device=\"" + c + "\"");
        assertTrue(devices.contains("data-device=\"" + a + "\"") && devices.contains("DRAINING"), devices);
        assertFalse(devices.contains("\n"), "one line per data field");
        assertEquals(Set.of(c), drainable(devices, ours), "the live fragment offers the operator's drain as the page did");
        String watched = awaitEvent(sam, "/ui/farm/live", "devices", Duration.ofSeconds(10), "data-device=\"" + c + "\"");
        assertEquals(Set.of(), drainable(watched, ours));
    }

    /** Logging out ends the session on the server: the old cookie no longer opens a page or posts. */
    @Test
    void logoutEndsTheSession() {
        DashboardBrowser b = DashboardBrowser.loggedIn(port, REVIEWER);
        String old = b.session;
        assertEquals(200, b.get("/ui/schedules").statusCode());
        assertEquals(403, b.post("/ui/logout", Map.of()).statusCode(), "a logout needs the CSRF token too");
        assertEquals(200, b.get("/ui/schedules").statusCode());

        HttpResponse<String> out = b.submit("/ui/schedules", "/ui/logout", Map.of());
        assertEquals(302, out.statusCode());
        assertEquals("/ui/login", location(out));
        String cleared = out.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("relayfarm_session=")).findFirst().orElseThrow();
        assertTrue(cleared.contains("Max-Age=0") && cleared.contains("Path=/ui"), cleared);
        assertNull(b.session);

        b.session = old; // a copy of the cookie kept elsewhere
        HttpResponse<String> page = b.get("/ui/schedules");
        assertEquals(303, page.statusCode());
        assertEquals("/ui/login?next=%2Fui%2Fschedules", location(page));
        assertEquals(401, b.post("/ui/logout", Map.of()).statusCode());
    }

    /**
     * Jobs and their artifacts are the submitters', as in the API: a reviewer's or operator's session gets 403 there and
     * no Jobs or Models link; {@code /ui} sends each role to its first page; anonymous {@code /ui} and {@code /ui/} go to
     * the login form.
     */
    @Test
    void jobsAndModelsNeedTheSubmitterRoleAndHomeFollowsTheRole() {
        DashboardBrowser rita = DashboardBrowser.loggedIn(port, REVIEWER), otto = DashboardBrowser.loggedIn(port, OPERATOR),
                sam = DashboardBrowser.loggedIn(port, SUBMITTER);
        for (String page : List.of("/ui/jobs", "/ui/models", "/ui/jobs/00000000-0000-0000-0000-000000000001",
                "/ui/jobs/00000000-0000-0000-0000-000000000001/artifact", "/ui/models/00000000-0000-0000-0000-000000000001")) {
            HttpResponse<String> r = rita.get(page);
            assertEquals(403, r.statusCode(), page);
            assertTrue(r.body().contains("needs the &#39;submitter&#39; role"), page + ": " + r.body());
        }
        assertEquals(200, sam.get("/ui/jobs").statusCode());
        assertEquals(404, sam.get("/ui/jobs/00000000-0000-0000-0000-000000000001").statusCode());
        String queue = rita.get("/ui/schedules").body();
        assertFalse(queue.contains("href=\"/ui/jobs\""), "no Jobs link for a reviewer");
        assertTrue(sam.get("/ui/schedules").body().contains("href=\"/ui/jobs\""), "a submitter's Jobs link");
        assertEquals("/ui/jobs", location(sam.get("/ui/")));
        assertEquals("/ui/schedules", location(rita.get("/ui")));
        assertEquals("/ui/farm", location(otto.get("/ui/")));
        for (String home : List.of("/ui", "/ui/")) {
            HttpResponse<String> r = new DashboardBrowser(port).get(home);
            assertEquals(303, r.statusCode(), home);
            assertTrue(location(r).startsWith("/ui/login?next="), location(r));
        }
    }

    /** Every dashboard answer, the login form's included, refuses to be framed or cached and allows no foreign script. */
    @Test
    void pagesCarrySecurityHeaders() {
        DashboardBrowser rita = DashboardBrowser.loggedIn(port, REVIEWER);
        for (HttpResponse<String> r : List.of(new DashboardBrowser(port).get("/ui/login"), rita.get("/ui/schedules"), rita.get("/ui/farm"))) {
            assertEquals("DENY", r.headers().firstValue("X-Frame-Options").orElse(null), r.uri().toString());
            String csp = r.headers().firstValue("Content-Security-Policy").orElse("");
            assertTrue(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"), csp);
            assertEquals("no-store", r.headers().firstValue("Cache-Control").orElse(null), r.uri().toString());
        }
    }

    /** A login form posted from another origin does not log the browser in (login CSRF). */
    @Test
    void aCrossSiteLoginIsRefused() throws Exception {
        DashboardBrowser b = new DashboardBrowser(port);
        var req = b.request("/ui/login").header("Content-Type", "application/x-www-form-urlencoded").header("Origin", "https://evil.example")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("token=" + REVIEWER)).build();
        HttpResponse<String> r = b.send(req);
        assertEquals(403, r.statusCode());
        assertTrue(r.headers().allValues("Set-Cookie").stream().noneMatch(c -> c.startsWith("relayfarm_session=")), r.headers().map().toString());
        var same = b.request("/ui/login").header("Content-Type", "application/x-www-form-urlencoded").header("Origin", "http://localhost:" + port)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("token=" + REVIEWER)).build();
        assertEquals(302, b.send(same).statusCode(), "the same origin logs in");
    }

    /** A live stream ends with its session: after logout the open farm stream closes instead of sending on. */
    @Test
    void aLiveStreamEndsAtLogout() throws Exception {
        DashboardBrowser otto = DashboardBrowser.loggedIn(port, OPERATOR);
        HttpResponse<InputStream> r = otto.client().send(otto.request("/ui/farm/live").header("Accept", "text/event-stream").GET().build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        try (InputStream in = r.body()) {
            CompletableFuture<Boolean> ended = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    while (lines.readLine() != null) {
                        // drain until the server closes the stream
                    }
                    return true;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(1500);
            assertFalse(ended.isDone(), "the stream stays open while logged in");
            assertEquals(302, otto.submit("/ui/farm", "/ui/logout", Map.of()).statusCode());
            assertTrue(ended.get(10, TimeUnit.SECONDS), "the stream ended after logout");
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    private String status(long schedule) {
        return jdbc.queryForObject("SELECT status FROM schedules WHERE id = ?", String.class, schedule);
    }

    private String deviceStatus(String device) {
        return jdbc.queryForObject("SELECT status FROM devices WHERE id = ?", String.class, device);
    }

    private List<String> history(long schedule) {
        return jdbc.queryForList("SELECT action || '/' || actor FROM schedule_history WHERE schedule_id = ? ORDER BY id", String.class, schedule);
    }

    private void decide(long schedule, String action, String body) {
        HttpResponse<String> r = postJson(REVIEWER, "/api/v1/schedules/" + schedule + "/" + action, body);
        assertEquals(200, r.statusCode(), r.body());
    }

    /** A DONE tuning run of {@code model} whose tasks are {@code workload -> {calls, default cost}}; its id. */
    private long tunedRun(String model, String deviceClass, Map<String, double[]> tasks) {
        long run = jdbc.queryForObject("""
                INSERT INTO tuning_runs (model_name, ir_ref, target, device_class, strategy, budget_ms, trials_per_task, status, created_by)
                VALUES (?, 'ir/test', 'c -mcpu=native', ?, 'xgb', 60000, 32, 'DONE', 'admin') RETURNING id""", Long.class, model, deviceClass);
        tasks.forEach((workload, callsAndCost) -> {
            long task = jdbc.queryForObject("""
                    INSERT INTO tuning_tasks (workload_key, template, target, device_class, strategy, trials, status, calls, default_cost_us)
                    VALUES (?, 'dense_pack.x86', 'c -mcpu=native', ?, 'xgb', 32, 'DONE', ?, ?) RETURNING id""",
                    Long.class, workload, deviceClass, (int) callsAndCost[0], callsAndCost[1]);
            jdbc.update("INSERT INTO tuning_run_tasks (run_id, task_id) VALUES (?, ?)", run, task);
        });
        return run;
    }

    /** The queue's rows by schedule id (the {@code data-schedule} attribute), each row's HTML. */
    private static Map<Long, String> rows(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        Map<Long, String> out = new LinkedHashMap<>();
        Matcher m = QUEUE_ROW.matcher(r.body());
        while (m.find()) out.put(Long.parseLong(m.group(1)), m.group(2));
        return out;
    }

    /** The last cell of a queue row ("New jobs get"), as text. */
    private static String newJobsCell(String rowHtml) {
        String[] cells = rowHtml.split("<td");
        return text("<td" + cells[cells.length - 1]);
    }

    /** The schedule page's "New jobs get" entry, as text. */
    private static String newJobsGet(String html) {
        Matcher m = Pattern.compile("id=\"new-jobs-get\">(.*?)</dd>", Pattern.DOTALL).matcher(html);
        assertTrue(m.find(), html);
        return text(m.group(1));
    }

    /** The error page's detail (element {@code problem}), as text. */
    private static String problem(HttpResponse<String> r) {
        Matcher m = PROBLEM.matcher(r.body());
        assertTrue(m.find(), "no problem paragraph in the " + r.statusCode() + " page: " + r.body());
        return text(m.group(1));
    }

    /** HTML as the text a reader sees: tags dropped, the escapes Thymeleaf writes undone, whitespace collapsed. */
    private static String text(String html) {
        return html.replaceAll("<[^>]*>", "").replace("&#39;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">")
                .replace("&#10;", " ").replace("&amp;", "&").replaceAll("\\s+", " ").trim();
    }

    /** Which of {@code devices} have a drain form in {@code html}. */
    private static Set<String> drainable(String html, Set<String> devices) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("name=\"device\" value=\"([^\"]+)\"").matcher(html);
        while (m.find()) {
            if (devices.contains(m.group(1))) out.add(m.group(1));
        }
        return out;
    }

    /**
     * Reads the event stream at {@code path} until an event named {@code name} whose data contains {@code part} (or
     * fails after {@code timeout}), then closes it; returns that event's data.
     */
    private static String awaitEvent(DashboardBrowser b, String path, String name, Duration timeout, String part) throws Exception {
        HttpResponse<InputStream> r = b.client().send(b.request(path).header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"), r.headers().map().toString());
        try (InputStream in = r.body()) {
            CompletableFuture<String> found = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    String event = null;
                    for (String line; (line = lines.readLine()) != null; ) {
                        if (line.startsWith("event:")) event = line.substring(6).trim();
                        else if (line.startsWith("data:") && name.equals(event) && line.contains(part)) return line.substring(5);
                        else if (line.isEmpty()) event = null;
                    }
                    throw new AssertionError("the stream ended without an event '" + name + "' containing " + part);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            return found.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
