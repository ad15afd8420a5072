-- vouch audit database, schema v2: what a suggested rule needs to be safe,
-- and a layout a half-year report can read quickly.
--
-- v1 rows did not record which harness reported them, whether a subagent's
-- request was forwarded, or what kind of subject they hold, so they cannot
-- tell a human approval on the ask path from forwarded or structural
-- evidence. They are kept (every total stays visible) as generation 1; only
-- generation 2 rows, written from now on, can yield a suggestion.
-- rusqlite_migration runs this file in the same transaction that sets
-- `user_version`: the upgrade happens whole or not at all.

-- Subjects and keyed hashes are stored once and referenced by id, so an
-- aggregate row is a handful of small integers.
CREATE TABLE subjects (
    id INTEGER PRIMARY KEY,
    surface TEXT NOT NULL,
    -- 'template' (bash command template), 'none' (bash command without a
    -- template; the subject says why), 'path' (path class), 'tool' (tool
    -- name), 'network' (destination class).
    kind TEXT NOT NULL CHECK (kind IN ('template', 'none', 'path', 'tool', 'network')),
    subject TEXT NOT NULL,
    UNIQUE (surface, kind, subject)
) STRICT;

-- HMAC values (project scopes, rule origins, rule patterns). Id 0 is "none".
CREATE TABLE hashes (
    id INTEGER PRIMARY KEY,
    value TEXT NOT NULL UNIQUE
) STRICT;
INSERT INTO hashes (id, value) VALUES (0, '');

CREATE TABLE daily_v2 (
    day INTEGER NOT NULL CHECK (day >= 0),
    scope_id INTEGER NOT NULL,
    subject_id INTEGER NOT NULL,
    -- The harness that reported it ('claude-code', 'pi', …, 'unknown').
    source TEXT NOT NULL,
    result TEXT NOT NULL,
    resolution TEXT NOT NULL,
    origin_id INTEGER NOT NULL,
    pattern_id INTEGER NOT NULL,
    -- 1 when a subagent's ask was forwarded to its parent: statistics only.
    forwarded INTEGER NOT NULL CHECK (forwarded IN (0, 1)),
    -- 1: recorded under schema v1 (never a suggestion); 2: since v2.
    generation INTEGER NOT NULL CHECK (generation IN (1, 2)),
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (day, scope_id, subject_id, source, result, resolution, origin_id,
                 pattern_id, forwarded, generation)
) STRICT, WITHOUT ROWID;

INSERT INTO subjects (surface, kind, subject)
SELECT DISTINCT surface,
       CASE
           WHEN surface = 'bash' AND subject LIKE '<%' THEN 'none'
           WHEN surface = 'bash' THEN 'template'
           WHEN surface IN ('read', 'write', 'edit', 'path', 'external_directory', 'delete')
               THEN 'path'
           WHEN surface = 'network' THEN 'network'
           ELSE 'tool'
       END,
       subject
FROM daily;

INSERT INTO hashes (value)
SELECT scope FROM daily WHERE scope <> ''
UNION SELECT origin FROM daily WHERE origin <> ''
UNION SELECT pattern FROM daily WHERE pattern <> '';

INSERT INTO daily_v2 (day, scope_id, subject_id, source, result, resolution, origin_id,
                      pattern_id, forwarded, generation, count)
SELECT d.day, hs.id, s.id, 'unknown', d.result, d.resolution, ho.id, hp.id, 0, 1, SUM(d.count)
FROM daily AS d
JOIN subjects AS s ON s.surface = d.surface AND s.subject = d.subject
JOIN hashes AS hs ON hs.value = d.scope
JOIN hashes AS ho ON ho.value = d.origin
JOIN hashes AS hp ON hp.value = d.pattern
GROUP BY d.day, hs.id, s.id, d.result, d.resolution, ho.id, hp.id;

DROP TABLE daily;
ALTER TABLE daily_v2 RENAME TO daily;

-- The same counts summed over aligned 16-day blocks (block = day / 16), kept
-- in the same transaction as `daily`: a report over a long window reads one
-- row per block instead of sixteen. Pruning rebuilds the block it cuts.
CREATE TABLE blocks (
    block INTEGER NOT NULL CHECK (block >= 0),
    scope_id INTEGER NOT NULL,
    subject_id INTEGER NOT NULL,
    source TEXT NOT NULL,
    result TEXT NOT NULL,
    resolution TEXT NOT NULL,
    origin_id INTEGER NOT NULL,
    pattern_id INTEGER NOT NULL,
    forwarded INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (block, scope_id, subject_id, source, result, resolution, origin_id,
                 pattern_id, forwarded, generation)
) STRICT, WITHOUT ROWID;
INSERT INTO blocks
SELECT day / 16, scope_id, subject_id, source, result, resolution, origin_id, pattern_id,
       forwarded, generation, SUM(count)
FROM daily
GROUP BY day / 16, scope_id, subject_id, source, result, resolution, origin_id, pattern_id,
         forwarded, generation;

-- Ingest checks `seen` by id on every event. The ids become their 16 raw
-- bytes (half the hex text: fewer pages per random insert), and the index
-- by day goes: it only served pruning, which runs once a day and may scan.
CREATE TABLE seen_v2 (
    id BLOB PRIMARY KEY,
    day INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT OR IGNORE INTO seen_v2 (id, day) SELECT unhex(id), day FROM seen WHERE unhex(id) IS NOT NULL;
DROP TABLE seen;
ALTER TABLE seen_v2 RENAME TO seen;

-- When safe recommendation evidence began: the moment of this migration.
INSERT INTO meta (key, value)
VALUES ('recommendations_since', CAST(strftime('%s', 'now') AS INTEGER) * 1000);

-- Retention already applied: rows before this day are gone (per scope when
-- a project shortened its retention; scope_id -1 is the global cutoff).
CREATE TABLE pruned (
    scope_id INTEGER PRIMARY KEY,
    before_day INTEGER NOT NULL
) STRICT;

-- vouch's own `defer` and `deny` decisions, awaiting the harness's
-- after-the-fact report: a deferred call that then ran is a human approval.
-- Keyed by an HMAC of session and request hash; expires after
-- `audit.pending_ttl_ms`.
CREATE TABLE pending (
    key TEXT PRIMARY KEY,
    decision TEXT NOT NULL CHECK (decision IN ('defer', 'deny')),
    expires_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX pending_by_expiry ON pending (expires_at_ms);
