-- A reviewer can take a pin back (issue 17, the dashboard's "unpin"): the schedule goes back to APPROVED, so the
-- apply-best rule judges it by its measurements again, and the history says who unpinned it and why.
ALTER TABLE schedule_history DROP CONSTRAINT schedule_history_action_check;
ALTER TABLE schedule_history ADD CONSTRAINT schedule_history_action_check
    CHECK (action IN ('PROPOSED', 'APPROVED', 'REJECTED', 'PINNED', 'AUTO_APPROVED', 'UNPINNED'));
