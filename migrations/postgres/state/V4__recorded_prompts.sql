-- The PostgreSQL form of migrations/state/V4__recorded_prompts.sql: the same tables,
-- columns, keys and checks (tests/it/store_schema.rs compares the two).
-- Every integer is BIGINT, as SQLite's are 64-bit.
-- vouch state database (PostgreSQL), schema v4: the latest user prompt of each harness
-- session, as the harness's prompt hook reported it (Claude Code's
-- `UserPromptSubmit` and its counterparts). The first tool call of a turn
-- can come before the harness has written its transcript file; the
-- recorded prompt then stands in for the transcript's user message.
-- Nothing secret is kept: the prompt is redacted and cut to the evidence
-- packet's user-message budget (with a visible marker) before it is stored.
-- One row per session, replaced by the session's next prompt; rows idle as
-- long as a turn's counters are kept (`turn_state`) are pruned by a scan at
-- most once a minute per process, as idle turns are (no expiry index: it
-- would add a page write to every prompt).
CREATE TABLE recorded_prompts (
    -- The harness (`claude-code`, `codex`, …): sessions of two harnesses
    -- may share an id.
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    -- The harness's turn id for the prompt, when its prompt event names one.
    turn_id TEXT,
    prompt TEXT NOT NULL,
    recorded_at_ms BIGINT NOT NULL,
    PRIMARY KEY (source, session_id)
);
