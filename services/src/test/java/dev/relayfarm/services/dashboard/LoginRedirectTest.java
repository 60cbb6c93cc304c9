package dev.relayfarm.services.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a login may send the browser ({@link LoginController#safeNext}): a dashboard path of this server, else the jobs list. */
class LoginRedirectTest {
    @Test
    void dashboardPathsAreKept() {
        for (String next : List.of("/ui/schedules", "/ui/schedules?status=APPROVED&deviceClass=cpu", "/ui/jobs/0123abcd", "/ui/farm")) {
            assertEquals(next, LoginController.safeNext(next));
        }
    }

    @Test
    void anythingElseGoesToTheJobsList() {
        for (String next : Arrays.asList(null, "", "/", "/ui", "https://evil.example/", "//evil", "//evil.example/ui/", "/\\evil.example",
                "/ui/\\\\evil", "javascript:alert(1)", "/api/v1/jobs", "ui/jobs", "/uix/jobs", "/ui/login", "/ui/login?next=//evil",
                "/ui/jobs\r\nSet-Cookie: x=1", "/ui/jobs\nLocation: //evil", "/ui/jobs\t")) {
            assertEquals(LoginController.HOME, LoginController.safeNext(next), String.valueOf(next));
        }
    }
}
