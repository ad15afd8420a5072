-- vouch state database, schema v2: grants lose their expiry index.
-- A mint and a consume are each one synchronous=FULL commit; with the index
-- every commit wrote two pages to the log (the table's and the index's),
-- without it one. Expired grants are pruned by a scan of the table at most
-- once a minute per process (src/grants.rs), as idle turns are: the table
-- holds only grants minted in the last `grants.ttl_ms` and not yet spent.
DROP INDEX grants_expiry;
