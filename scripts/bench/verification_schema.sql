-- Tables for the pgbench side of scripts/bench-verification.sh, in their own schema of the
-- bench database. They mirror the verification server's "teletans", "registration_tokens" and
-- "tans" tables (columns, types, primary keys, unique hash) as its migrations create them on
-- PostgreSQL. teletans is pre-filled with rows to redeem: row n has the hash sha256(n) in hex,
-- and verification-chain.sql takes n from a sequence, so every run redeems a fresh row.
-- Recreated on every run; :teletans is set by the driver (psql -v teletans=N).
DROP SCHEMA IF EXISTS pgbench_ver CASCADE;
CREATE SCHEMA pgbench_ver;

CREATE TABLE pgbench_ver.teletans (
    id           uuid PRIMARY KEY,
    hash         text NOT NULL UNIQUE,
    type         text NOT NULL,
    created_at   timestamptz NOT NULL,
    valid_until  timestamptz NOT NULL,
    redeemed_at  timestamptz,
    requested_by text NOT NULL
);
CREATE TABLE pgbench_ver.registration_tokens (
    id           uuid PRIMARY KEY,
    hash         text NOT NULL UNIQUE,
    teletan_type text NOT NULL,
    created_at   timestamptz NOT NULL,
    tan_issued   boolean NOT NULL
);
CREATE TABLE pgbench_ver.tans (
    id           uuid PRIMARY KEY,
    hash         text NOT NULL UNIQUE,
    teletan_type text NOT NULL,
    created_at   timestamptz NOT NULL,
    valid_until  timestamptz NOT NULL,
    redeemed_at  timestamptz
);
CREATE SEQUENCE pgbench_ver.next_teletan;

INSERT INTO pgbench_ver.teletans (id, hash, type, created_at, valid_until, requested_by)
SELECT gen_random_uuid(), encode(sha256(n::text::bytea), 'hex'), 'TEST', now(), now() + interval '1 hour', 'bench'
FROM generate_series(1, :teletans) AS n;
VACUUM ANALYZE pgbench_ver.teletans;
