-- Tables for the pgbench side of scripts/bench-portal.sh, in their own schema of the
-- bench database. They mirror the portal's "teletans" and "audit_log" tables (columns,
-- types, primary keys, unique hash, the five audit indexes) as the portal's migrations
-- create them on PostgreSQL. Recreated on every run.
DROP SCHEMA IF EXISTS pgbench_eq CASCADE;
CREATE SCHEMA pgbench_eq;

CREATE TABLE pgbench_eq.teletans (
    id           uuid PRIMARY KEY,
    hash         text NOT NULL UNIQUE,
    type         text NOT NULL,
    created_at   timestamptz NOT NULL,
    valid_until  timestamptz NOT NULL,
    redeemed_at  timestamptz,
    requested_by text NOT NULL
);

CREATE SEQUENCE pgbench_eq.audit_seq;
CREATE TABLE pgbench_eq.audit_log (
    seq         bigint PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    actor       text,
    role        text,
    action      text NOT NULL,
    outcome     text NOT NULL,
    address     text,
    request_id  text,
    subject     text,
    details     text NOT NULL,
    prev_hash   text NOT NULL,
    hash        text NOT NULL
);
CREATE INDEX ON pgbench_eq.audit_log (occurred_at);
CREATE INDEX ON pgbench_eq.audit_log (actor);
CREATE INDEX ON pgbench_eq.audit_log (action);
CREATE INDEX ON pgbench_eq.audit_log (outcome);
CREATE INDEX ON pgbench_eq.audit_log (subject);

-- Only for issue-chained.sql: its own copy of the audit table, and the chain head the
-- portal locks for every audit entry.
CREATE TABLE pgbench_eq.audit_chain (LIKE pgbench_eq.audit_log INCLUDING ALL);
CREATE TABLE pgbench_eq.audit_head (id int PRIMARY KEY, seq bigint NOT NULL, hash text NOT NULL);
INSERT INTO pgbench_eq.audit_head VALUES (1, 0, repeat('0', 64));
