-- A job's arithmetic (issue 21): float (the model's own types; every job before this column) or int8 (quantized
-- after type inference, calibrated on seeded inputs, then optimized and compiled as usual).
ALTER TABLE jobs ADD COLUMN quantize TEXT NOT NULL DEFAULT 'float';
