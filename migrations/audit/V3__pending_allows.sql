-- vouch audit database, schema v3: an `allow` can await its after-the-fact
-- report too. For a harness whose after-event carries the arguments that
-- ran (a later hook or plugin can rewrite them after vouch's check), an
-- allowed call is remembered, and a call that ran matching no decision of
-- its session is counted as `ran_unreviewed`. SQLite cannot change a CHECK
-- constraint in place: the table is copied.
CREATE TABLE pending_v3 (
    key TEXT PRIMARY KEY,
    decision TEXT NOT NULL CHECK (decision IN ('defer', 'deny', 'allow')),
    expires_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO pending_v3 (key, decision, expires_at_ms)
    SELECT key, decision, expires_at_ms FROM pending;
DROP TABLE pending;
ALTER TABLE pending_v3 RENAME TO pending;
CREATE INDEX pending_by_expiry ON pending (expires_at_ms);
