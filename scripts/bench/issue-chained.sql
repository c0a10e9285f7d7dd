-- pgbench script: issue.sql plus the portal's audit hash chain -- the head row is locked
-- (SELECT ... FOR UPDATE) until commit, the entry takes seq and prev_hash from it, and the
-- head moves on. Every transaction queues for that one row, as in Audit/AuditLog.swift.
-- Informational: shows the ceiling that a single serialising row lock puts on this server.
\set officer random(1, 50)
BEGIN;
SELECT seq FROM pgbench_eq.audit_head WHERE id = 1 FOR UPDATE;
INSERT INTO pgbench_eq.teletans (id, hash, type, created_at, valid_until, requested_by)
VALUES (gen_random_uuid(), encode(sha256(random()::text::bytea), 'hex'), 'TEST',
        now(), now() + interval '1 hour', 'tt-bench-' || :officer);
INSERT INTO pgbench_eq.audit_chain
    (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
SELECT seq + 1, now(), 'tt-bench-' || :officer, 'officer', 'teletan.issue', 'success',
       '127.0.0.1', md5(random()::text), encode(sha256(random()::text::bytea), 'hex'),
       '{"type":"TEST","valid_until":"2030-01-01T00:00:00Z"}',
       hash, encode(sha256((hash || random()::text)::bytea), 'hex')
FROM pgbench_eq.audit_head WHERE id = 1;
UPDATE pgbench_eq.audit_head h SET seq = h.seq + 1, hash = a.hash
FROM pgbench_eq.audit_chain a WHERE h.id = 1 AND a.seq = h.seq + 1;
END;
