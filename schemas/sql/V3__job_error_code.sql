-- The stable code of a failed job's user error (the library's Diagnostic code: relay-syntax, onnx-unsupported,
-- not-executable, ...), so clients can branch on it without parsing the message. NULL for internal failures (a
-- compiler bug or an environment fault) and for jobs that failed before this column existed.
ALTER TABLE jobs ADD COLUMN error_code text;
