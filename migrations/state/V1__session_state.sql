-- vouch state database, schema v1 (design §2, §6.3, §6.6, §6.7).
-- Only what the features need: counters, hashes, and for recent model denials
-- a redacted summary shown to the operator. Every table is bounded and
-- expiring; nothing here is a secret (grant tokens are stored as SHA-256).

-- Per (session, turn) circuit breaker and budgets.
CREATE TABLE turn_state (
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    -- Model-backed reviews started (reserved at the gate, before the call).
    reviews INTEGER NOT NULL DEFAULT 0 CHECK (reviews >= 0),
    -- Reviewer failures recorded.
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    -- Model verdicts recorded (allow, deny or defer; cache replays included).
    verdicts INTEGER NOT NULL DEFAULT 0 CHECK (verdicts >= 0),
    -- Model denials recorded (cache replays included).
    denials INTEGER NOT NULL DEFAULT 0 CHECK (denials >= 0),
    consecutive_denials INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_denials >= 0),
    -- The last `breaker.window_size` model verdicts, oldest first:
    -- 'D' for a denial, 'A' for anything else.
    recent TEXT NOT NULL DEFAULT '' CHECK (recent NOT GLOB '*[^AD]*'),
    breaker_open INTEGER NOT NULL DEFAULT 0 CHECK (breaker_open IN (0, 1)),
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, turn_id)
) STRICT, WITHOUT ROWID;
-- No index on updated_at_ms on purpose: it would add a page write to every
-- review. Idle turns are pruned by a scan whenever a new turn starts.

-- Verdict cache keyed by the packet hash (fence nonce left out).
-- Keyed by the hash itself (no rowid) so an insert touches one table page
-- and one index page. The TTL is one value per config, so expiry order is
-- insertion order: the oldest entries are evicted first.
CREATE TABLE verdict_cache (
    cache_key TEXT PRIMARY KEY,
    outcome TEXT NOT NULL CHECK (outcome IN ('allow', 'deny', 'defer')),
    risk_level TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
    user_authorization TEXT NOT NULL
        CHECK (user_authorization IN ('unknown', 'low', 'medium', 'high')),
    rationale TEXT NOT NULL,
    suggestion TEXT,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX verdict_cache_expiry ON verdict_cache (expires_at_ms);

-- Recent model denials, shown to operators for exact retry and break glass.
-- `summary` is the redacted command/target; `cwd` is the request's cwd.
CREATE TABLE denials (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    risk_level TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
    surface TEXT NOT NULL,
    cwd TEXT,
    summary TEXT NOT NULL,
    rationale TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX denials_session ON denials (session_id, id);
CREATE INDEX denials_session_hash ON denials (session_id, request_hash, id);
CREATE INDEX denials_created ON denials (created_at_ms);

-- One-use human authorizations for an exact retry: an override (the model
-- still reviews, with the override as trusted context) or break glass (allow
-- without the model). Bound to session and request hash.
CREATE TABLE authorizations (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('override', 'break_glass')),
    session_id TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    -- The denial it answers; one authorization per denial row.
    denial_id INTEGER REFERENCES denials (id) ON DELETE SET NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    -- NULL while pending.
    used_at_ms INTEGER
) STRICT;
CREATE INDEX authorizations_pending ON authorizations (session_id, request_hash, used_at_ms);
CREATE INDEX authorizations_denial ON authorizations (denial_id);
CREATE INDEX authorizations_created ON authorizations (created_at_ms);

-- Outstanding break-glass challenges (CLI or operator API). Only the SHA-256
-- of the expected phrase is kept.
CREATE TABLE break_glass_challenges (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    denial_id INTEGER NOT NULL REFERENCES denials (id) ON DELETE CASCADE,
    phrase_sha256 TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX break_glass_challenges_expiry ON break_glass_challenges (expires_at_ms);

-- One-use grants for sandbox brokers; only the token's SHA-256 is stored.
CREATE TABLE grants (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX grants_expiry ON grants (expires_at_ms);
