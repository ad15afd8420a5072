-- The PostgreSQL form of migrations/state/V3__verdict_cache_size.sql: the
-- verdict cache's size is kept in one row by triggers, in the transaction
-- that changes the cache (an upsert that updates fires neither).
CREATE TABLE verdict_cache_size (
    id BIGINT PRIMARY KEY CHECK (id = 0),
    entries BIGINT NOT NULL CHECK (entries >= 0)
);
INSERT INTO verdict_cache_size (id, entries) SELECT 0, count(*) FROM verdict_cache;
CREATE FUNCTION vouch_verdict_cache_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE verdict_cache_size SET entries = entries + 1 WHERE id = 0;
    ELSE
        UPDATE verdict_cache_size SET entries = entries - 1 WHERE id = 0;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER verdict_cache_inserted AFTER INSERT ON verdict_cache
    FOR EACH ROW EXECUTE FUNCTION vouch_verdict_cache_count();
CREATE TRIGGER verdict_cache_deleted AFTER DELETE ON verdict_cache
    FOR EACH ROW EXECUTE FUNCTION vouch_verdict_cache_count();
