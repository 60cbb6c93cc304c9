-- A job's tuning option (issue 16): off (template defaults only), apply (stored schedules; the behaviour before this
-- column), or budget=<duration> (tune what has no schedule on the farm, wait up to the budget, apply what was found).
ALTER TABLE jobs ADD COLUMN tune TEXT NOT NULL DEFAULT 'apply';
