-- The PostgreSQL form of migrations/state/V2__grants_without_expiry_index.sql: the same tables,
-- columns, keys and checks (tests/it/store_schema.rs compares the two).
-- Every integer is BIGINT, as SQLite's are 64-bit.
-- vouch state database (PostgreSQL), schema v2: grants lose their expiry index.
-- A mint and a consume are each one synchronous=FULL commit; with the index
-- every commit wrote two pages to the log (the table's and the index's),
-- without it one. Expired grants are pruned by a scan of the table at most
-- once a minute per process (src/grants.rs), as idle turns are: the table
-- holds only grants minted in the last `grants.ttl_ms` and not yet spent.
DROP INDEX grants_expiry;
