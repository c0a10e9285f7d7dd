-- pgbench script: the database work of one app-facing chain of the verification server, as
-- three transactions (three commits, like the server): redeem a teleTAN and insert a
-- registration token; mark the token's TAN issued and insert the TAN; redeem the TAN.
-- Hashes are SHA-256 hex of random values (the server uses keyed hashes of the same length).
-- Not included: the guessing-protection reads the server does before each redemption
-- (lockouts, rate_slots), JSON, HTTP. A teleTAN that is not there (the pre-filled rows used
-- up) makes \gset fail and aborts the client, which shows up as a pgbench failure.
BEGIN;
UPDATE pgbench_ver.teletans SET redeemed_at = now()
WHERE hash = (SELECT encode(sha256(nextval('pgbench_ver.next_teletan')::text::bytea), 'hex'))
  AND redeemed_at IS NULL AND valid_until > now()
RETURNING type AS ttype \gset
INSERT INTO pgbench_ver.registration_tokens (id, hash, teletan_type, created_at, tan_issued)
VALUES (gen_random_uuid(), encode(sha256(gen_random_uuid()::text::bytea), 'hex'), ':ttype', now(), false)
RETURNING hash AS rthash \gset
COMMIT;
BEGIN;
UPDATE pgbench_ver.registration_tokens SET tan_issued = true
WHERE hash = ':rthash' AND tan_issued = false
RETURNING teletan_type AS ttype2 \gset
INSERT INTO pgbench_ver.tans (id, hash, teletan_type, created_at, valid_until)
VALUES (gen_random_uuid(), encode(sha256(gen_random_uuid()::text::bytea), 'hex'), ':ttype2', now(), now() + interval '14 days')
RETURNING hash AS tanhash \gset
COMMIT;
UPDATE pgbench_ver.tans SET redeemed_at = now()
WHERE hash = ':tanhash' AND redeemed_at IS NULL AND valid_until > now()
RETURNING teletan_type AS ttype3 \gset
