-- A job's tuning option (issue 16): off (template defaults only), apply (stored schedules; the behaviour before this
-- column), or budget=<duration> (tune what has no schedule on the farm, wait up to the budget, apply what was found).
ALTER TABLE jobs ADD COLUMN tune TEXT NOT NULL DEFAULT 'apply';

-- The measure request a device is working on (null when idle): an operator sees what a stuck or killed agent held,
-- and the e2e test checks that another agent measured it.
ALTER TABLE devices ADD COLUMN in_flight_request UUID;
-- Measurements per minute per device (the devices endpoint) reads the last minutes of a device's records.
CREATE INDEX tuning_records_device_time ON tuning_records (device_id, measured_at);
