package dev.relayfarm.services.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.relayfarm.services.store.TuningRunView;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A tuning run's ETA on the farm page: progress extrapolated, never past the budget's end; none once the run ended. */
class FarmPageEtaTest {
    private static final Instant START = Instant.parse("2026-11-26T12:00:00Z");
    private static final long BUDGET = Duration.ofMinutes(10).toMillis();

    private static TuningRunView run(String status, double progress) {
        return new TuningRunView(1, null, "resnet", "c -mcpu=native", "cpu", "xgb", BUDGET, 32, status, "otto", START, START, 4,
                0, (long) (progress * 128), 128, progress, List.of());
    }

    @Test
    void progressIsExtrapolated() {
        // a quarter done after one minute: three more minutes at that pace
        assertEquals(Duration.ofMinutes(3).toMillis(), FarmPage.eta(run("RUNNING", 0.25), START.plus(Duration.ofMinutes(1))));
        assertEquals(Duration.ofMinutes(1).toMillis(), FarmPage.eta(run("RUNNING", 0.5), START.plus(Duration.ofMinutes(1))));
        assertEquals(0L, FarmPage.eta(run("RUNNING", 1.0), START.plus(Duration.ofMinutes(1))), "every trial made: nothing left");
    }

    @Test
    void theBudgetBoundsIt() {
        // a tenth done after two minutes would need 18 more, but the budget ends in 8
        assertEquals(Duration.ofMinutes(8).toMillis(), FarmPage.eta(run("RUNNING", 0.1), START.plus(Duration.ofMinutes(2))));
        // no progress yet: the budget is all there is to go by
        assertEquals(Duration.ofMinutes(7).toMillis(), FarmPage.eta(run("RUNNING", 0), START.plus(Duration.ofMinutes(3))));
        assertEquals(0L, FarmPage.eta(run("RUNNING", 0.3), START.plus(Duration.ofMinutes(15))), "past the budget: zero, not negative");
        assertEquals(BUDGET, FarmPage.eta(run("RUNNING", 0), START.minusSeconds(5)), "a clock behind the run's start counts as no time elapsed");
    }

    @Test
    void anEndedRunHasNone() {
        for (String status : List.of("DONE", "CANCELLED", "FAILED")) assertNull(FarmPage.eta(run(status, 0.4), START.plus(Duration.ofMinutes(1))), status);
    }
}
