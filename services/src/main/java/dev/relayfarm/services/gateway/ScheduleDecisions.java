package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.ScheduleDecision;
import dev.relayfarm.services.store.ScheduleReviews;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * A reviewer's decision on a schedule, the one way the API and the dashboard make it: the note is trimmed (blank is
 * none), a rejection needs one, unpinning needs a pin, and the reviewer recorded is the caller's token name. Failures
 * are the API's problems (404, 400 {@code note-required}, 409 {@code schedule-not-pinned}); the caller's role is
 * checked before this ({@code @RequiresRole(REVIEWER)}).
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class ScheduleDecisions {
    private static final Logger log = LoggerFactory.getLogger(ScheduleDecisions.class);
    private final ScheduleReviews reviews;

    public ScheduleDecisions(ScheduleReviews reviews) {
        this.reviews = reviews;
    }

    public void decide(long schedule, ScheduleDecision decision, String note, Caller caller) {
        String text = note == null || note.isBlank() ? null : note.trim();
        if (decision == ScheduleDecision.REJECT && text == null) {
            // a rejection without a reason teaches nobody anything: the worker's next proposal would be rejected blind
            throw new ApiProblem(ProblemType.NOTE_REQUIRED, "rejecting schedule " + schedule + " needs a reason: a note saying why",
                    Map.of(SubmitFields.CODE, ProblemType.NOTE_REQUIRED.slug));
        }
        try {
            reviews.decide(schedule, decision, caller.name(), text).orElseThrow(() -> notFound(schedule));
        } catch (ScheduleReviews.NotPinned e) {
            // not "status": that member is the problem's HTTP status (RFC 9457), and a second one made the JSON name it twice
            throw new ApiProblem(ProblemType.SCHEDULE_NOT_PINNED, e.getMessage(), Map.of("scheduleStatus", e.status));
        }
        log.info("schedule {} {} by {}", schedule, decision.action, caller.name());
    }

    static ApiProblem notFound(long id) {
        return new ApiProblem(ProblemType.SCHEDULE_NOT_FOUND, "no schedule with id " + id);
    }
}
