-- The PostgreSQL form of migrations/audit/V1__daily_aggregates.sql: the same
-- tables, columns, keys and checks (tests/it/store_schema.rs compares the
-- two). Every integer is BIGINT, as SQLite's are 64-bit. The audit tables
-- live in the same database as the state; their names do not meet the
-- state's.
-- vouch audit database (PostgreSQL), schema v1 (design §8): daily
-- aggregates only.
--
-- Nothing in this file is a raw command, path, URL or secret. A subject is a
-- command template, a path class or a tool name; project scopes, rule origins
-- and rule patterns are HMAC-SHA256 values under the `hmac.key` every
-- replica holds a copy of.

-- When this database started collecting (ms since the Unix epoch). In
-- milliseconds here (SQLite's has whole seconds): writers compare it to tell
-- a recreated audit from the one their cached ids came from.
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO meta (key, value)
VALUES ('collecting_since', CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT));

-- One row per (UTC day, project scope, surface, subject, outcome, how it was
-- reached, rule origin, rule pattern): how many times it happened.
CREATE TABLE daily (
    -- Days since 1970-01-01 (UTC).
    day BIGINT NOT NULL CHECK (day >= 0),
    -- HMAC of the project root; '' when the event named no directory.
    scope TEXT NOT NULL,
    surface TEXT NOT NULL,
    subject TEXT NOT NULL,
    result TEXT NOT NULL,
    resolution TEXT NOT NULL,
    -- HMAC of the configuration scope of the winning rule, or ''.
    origin TEXT NOT NULL,
    -- HMAC of the winning rule's pattern, or ''.
    pattern TEXT NOT NULL,
    count BIGINT NOT NULL CHECK (count > 0),
    PRIMARY KEY (day, scope, surface, subject, result, resolution, origin, pattern)
);

-- Ingested event ids (HMAC), so the same batch twice counts once. Pruned
-- with the aggregates.
CREATE TABLE seen (
    id TEXT PRIMARY KEY,
    day BIGINT NOT NULL
);
CREATE INDEX seen_by_day ON seen (day);
