-- pgbench script: the database work every teleTAN issuance cannot do without -- store
-- the teleTAN's hash and append one audit row -- in one transaction, with random values.
-- Audit sequence numbers come from a sequence, so concurrent clients never wait for
-- each other (unlike the portal's hash chain, see issue-chained.sql).
\set officer random(1, 50)
BEGIN;
INSERT INTO pgbench_eq.teletans (id, hash, type, created_at, valid_until, requested_by)
VALUES (gen_random_uuid(), encode(sha256(random()::text::bytea), 'hex'), 'TEST',
        now(), now() + interval '1 hour', 'tt-bench-' || :officer);
INSERT INTO pgbench_eq.audit_log
    (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
VALUES (nextval('pgbench_eq.audit_seq'), now(), 'tt-bench-' || :officer, 'officer', 'teletan.issue', 'success',
        '127.0.0.1', md5(random()::text), encode(sha256(random()::text::bytea), 'hex'),
        '{"type":"TEST","valid_until":"2030-01-01T00:00:00Z"}',
        encode(sha256(random()::text::bytea), 'hex'), encode(sha256(random()::text::bytea), 'hex'));
END;
