-- Run by scripts/bench-portal.sh after it has emptied schema public of database teletan_bench.
-- The pgbench side of that benchmark (officer-cycle.sql) replays the portal's own statements on
-- the portal's own tables, so it needs no tables of its own. This only removes the schema that
-- earlier versions of the benchmark created for their bare-insert comparison.
DROP SCHEMA IF EXISTS pgbench_eq CASCADE;
