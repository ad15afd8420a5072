-- vouch state database, schema v3: the verdict cache's size is kept, not
-- counted. Checking `cache.max_entries` counted the whole cache on every
-- insert, a scan of its index: ~5 µs at the shipped 256 entries, ~3 ms at
-- the 100,000 the key allows, under the one write lock every review takes.
-- Two triggers keep the number in one row, in the transaction that changes
-- the cache (the insert is an upsert: a refreshed entry is an update, which
-- neither trigger counts).
CREATE TABLE verdict_cache_size (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    entries INTEGER NOT NULL CHECK (entries >= 0)
) STRICT;
INSERT INTO verdict_cache_size (id, entries) SELECT 0, count(*) FROM verdict_cache;
CREATE TRIGGER verdict_cache_inserted AFTER INSERT ON verdict_cache
BEGIN
    UPDATE verdict_cache_size SET entries = entries + 1 WHERE id = 0;
END;
CREATE TRIGGER verdict_cache_deleted AFTER DELETE ON verdict_cache
BEGIN
    UPDATE verdict_cache_size SET entries = entries - 1 WHERE id = 0;
END;
