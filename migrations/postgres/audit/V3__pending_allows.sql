-- The PostgreSQL form of migrations/audit/V3__pending_allows.sql
-- (tests/it/store_schema.rs compares the two). PostgreSQL changes the CHECK
-- constraint in place where SQLite copies the table.
-- vouch audit database (PostgreSQL), schema v3: an `allow` can await its
-- after-the-fact report too. For a harness whose after-event carries the
-- arguments that ran (a later hook or plugin can rewrite them after vouch's
-- check), an allowed call is remembered, and a call that ran matching no
-- decision of its session is counted as `ran_unreviewed`.
ALTER TABLE pending DROP CONSTRAINT pending_decision_check;
ALTER TABLE pending ADD CONSTRAINT pending_decision_check
    CHECK (decision IN ('defer', 'deny', 'allow'));
