-- vouch audit database, schema v1 (design §8): daily aggregates only.
--
-- Nothing in this file is a raw command, path, URL or secret. A subject is a
-- command template, a path class or a tool name; project scopes, rule origins
-- and rule patterns are HMAC-SHA256 values under the local `hmac.key`.
-- This schema is kept as it was first written: `V2__…` upgrades it, and a
-- test builds a v1 database from this file and migrates it.

-- When this database started collecting (ms since the Unix epoch).
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO meta (key, value)
VALUES ('collecting_since', CAST(strftime('%s', 'now') AS INTEGER) * 1000);

-- One row per (UTC day, project scope, surface, subject, outcome, how it was
-- reached, rule origin, rule pattern): how many times it happened.
CREATE TABLE daily (
    -- Days since 1970-01-01 (UTC).
    day INTEGER NOT NULL CHECK (day >= 0),
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
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (day, scope, surface, subject, result, resolution, origin, pattern)
) STRICT, WITHOUT ROWID;

-- Ingested event ids (HMAC), so the same batch twice counts once. Pruned
-- with the aggregates.
CREATE TABLE seen (
    id TEXT PRIMARY KEY,
    day INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX seen_by_day ON seen (day);
