-- pgbench script: the database work of one officer cycle of the portal (GET /, POST /teletan,
-- GET /teletan/result), replayed statement by statement: the same SQL text the portal sends (as
-- captured from PostgreSQL by scripts/bench-portal.sh), the same bind parameters in the same
-- places, the same transaction boundaries, on the portal's own tables in database teletan_bench.
-- One pgbench transaction = one cycle, so pgbench's tps is the floor the portal's cycles/s are
-- compared with. Run with -M extended (the portal, through PostgresNIO, sends every statement as
-- an unnamed Parse/Bind/Execute, BEGIN and COMMIT included).
--
-- Per client (once, the first time the script runs): the (client_id + 1)-th officer that has a
-- session (tt-bench-01, -02, ... after the portal's runs) and that officer's newest session, so
-- every client reads and writes its own session, its own pending display and its own rate-limit
-- rows, as signed-in officers do (as long as there are no more clients than such officers).
--
-- Per cycle, one statement the portal does not send (marked replay-only): it makes what the
-- portal computes in Swift -- random ids and hashes, the times, the audit entry's canonical text
-- (pgbench variables are strings or integers; it cannot make a UUID). It costs the floor a round
-- trip and a few microseconds, i.e. it makes the floor a little lower (lenient to the portal);
-- the report shows its share.
--
-- Differences in shape left: parameters are sent as text (the portal sends times and UUIDs
-- binary), and issued_teletans.health_authority is '' where the portal binds NULL (pgbench has
-- no NULL). The audit entry's canonical text is built as the portal builds it, so the replay's
-- entries chain like the portal's: `portal audit verify` after the replay checks that too (if
-- it fails there but not before the replay, the portal's canonical form changed).
--
-- Casts: pgbench sends parameters untyped, PostgreSQL infers their types. Where it would infer
-- text and convert (a parameter in a SELECT list), a cast gives the parameter the type the portal
-- binds, so that the statement is the same statement (same pg_stat_statements queryid).
--
-- Needs: -D replay_ready=0 (pgbench cannot ask whether a variable is set).
\if :replay_ready = 0
/* replay-only: per-client setup */ SELECT s.id_hash AS sess, s.username AS officer,
       translate(encode(sha512(s.id_hash::bytea) || sha512(s.username::bytea) || sha512(s.roles::bytea), 'base64'), E'\n', '') AS sealed,
       '' AS health_authority, 'teletan.user.day' AS rule_day, 'teletan.global' AS rule_global,
       'TEST' AS ttype, 'officer' AS role, 'teletan.issue' AS action, 'success' AS outcome, '127.0.0.1' AS address
FROM sessions s
WHERE s.username = (SELECT username FROM (SELECT DISTINCT username FROM sessions) u ORDER BY username
                    OFFSET :client_id % (SELECT count(DISTINCT username) FROM sessions) LIMIT 1)
ORDER BY s.created_at DESC LIMIT 1 \gset
\set replay_ready 1
\endif
/* replay-only: the values the portal computes in Swift */ SELECT
       (extract(epoch FROM t) * 1000)::bigint AS ms, t AS now, date_trunc('second', t) AS made,
       t - interval '10 minutes' AS cutoff, t + interval '1 hour' AS valid_until,
       date_trunc('milliseconds', t) AS occurred, 'shard-' || floor(random() * 8)::int AS shard,
       gen_random_uuid() AS teletan_id, gen_random_uuid() AS issued_id,
       encode(sha256(gen_random_uuid()::text::bytea), 'hex') AS nonce_hash,
       encode(sha256(gen_random_uuid()::text::bytea), 'hex') AS teletan_hash,
       fp AS fingerprint, rid AS request_id, details,
       '{"action":"teletan.issue","actor":' || to_json(:officer::text) || ',"address":"127.0.0.1","at_ms":'
         || (extract(epoch FROM date_trunc('milliseconds', t)) * 1000)::bigint || ',"details":' || to_json(details)
         || ',"outcome":"success","request_id":"' || rid || '","role":"officer","seq":' AS canon_prefix,
       ',"subject":"' || fp || '"}' AS canon_suffix
FROM (SELECT now() AS t, encode(sha256(gen_random_uuid()::text::bytea), 'hex') AS fp, md5(random()::text) AS rid) v,
     LATERAL (SELECT '{"type":"TEST","valid_until":' || rtrim(to_json(date_trunc('second', (t + interval '1 hour') AT TIME ZONE 'UTC'))::text, '"') || 'Z"}' AS details) d \gset
\set day_slot :ms / 1440000
\set day_expires (:day_slot + 61) * 1440000
\set day_oldest :day_slot - 59
\set global_slot :ms / 60000
\set global_expires (:global_slot + 61) * 60000
\set global_oldest :global_slot - 59
-- GET /: the session, and whether a teleTAN is waiting to be shown.
SELECT id_hash, username, roles, created_at, last_seen_at FROM sessions
WHERE id_hash = :sess;
SELECT created_at FROM pending_displays WHERE session_hash = :sess;
-- POST /teletan: the session; then one transaction: the form's nonce, a waiting teleTAN, the
-- officer's daily limit, the global limit (8 shards), the teleTAN, its display, the officer's
-- list, and the audit entry chained to the locked head.
SELECT id_hash, username, roles, created_at, last_seen_at FROM sessions
WHERE id_hash = :sess;
BEGIN;
INSERT INTO form_nonces (nonce_hash, session_hash, created_at)
VALUES (:nonce_hash, :sess, :made)
ON CONFLICT (nonce_hash) DO NOTHING
RETURNING nonce_hash;
DELETE FROM pending_displays WHERE session_hash = :sess AND created_at <= :cutoff RETURNING session_hash, sealed;
SELECT created_at FROM pending_displays WHERE session_hash = :sess;
WITH counted AS (
    INSERT INTO rate_slots (rule, bucket, slot, hits, expires_ms)
    VALUES (:rule_day, :officer, :day_slot, 1, :day_expires)
    ON CONFLICT (rule, bucket, slot) DO UPDATE SET hits = rate_slots.hits + 1
    RETURNING slot, hits)
SELECT slot, hits FROM counted
UNION ALL
SELECT slot, hits FROM rate_slots
WHERE rule = :rule_day AND bucket = :officer AND slot >= :day_oldest AND slot <> :day_slot
ORDER BY slot;
WITH counted AS (
    INSERT INTO rate_slots (rule, bucket, slot, hits, expires_ms)
    VALUES (:rule_global, :shard, :global_slot, 1, :global_expires)
    ON CONFLICT (rule, bucket, slot) DO UPDATE SET hits = rate_slots.hits + 1
    RETURNING slot, hits)
SELECT slot, SUM(hits) AS hits FROM (
    SELECT slot, hits FROM counted
    UNION ALL
    SELECT slot, hits FROM rate_slots
    WHERE rule = :rule_global AND slot >= :global_oldest AND NOT (bucket = :shard AND slot = :global_slot)
) AS window_slots
GROUP BY slot ORDER BY slot;
INSERT INTO teletans (id, hash, type, created_at, valid_until, redeemed_at, requested_by)
VALUES (:teletan_id, :teletan_hash, :ttype,
        :now, :valid_until, NULL, :officer);
INSERT INTO pending_displays (session_hash, sealed, created_at)
VALUES (:sess, :sealed, :now)
ON CONFLICT (session_hash) DO NOTHING
RETURNING session_hash;
INSERT INTO issued_teletans (id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at,
                             call_id, revoke_reason, revoke_note)
VALUES (:issued_id, :officer, :fingerprint, :ttype, :teletan_id, :now,
        :valid_until, :health_authority, NULL, :health_authority, NULL, NULL);
WITH head AS (SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE),
entry AS (
    INSERT INTO audit_log (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
    SELECT head.seq + 1, :occurred::timestamptz, :officer::text, :role::text, :action::text,
           :outcome::text, :address::text, :request_id::text, :fingerprint::text,
           :details::text, head.hash,
           encode(sha256(convert_to(head.hash || chr(10) || :canon_prefix || (head.seq + 1)::text || :canon_suffix, 'UTF8')), 'hex')
    FROM head
    RETURNING seq, hash)
UPDATE audit_head SET seq = entry.seq, hash = entry.hash FROM entry WHERE audit_head.id = 1
RETURNING audit_head.seq;
COMMIT;
-- GET /teletan/result: the session; take the waiting teleTAN (one transaction).
SELECT id_hash, username, roles, created_at, last_seen_at FROM sessions
WHERE id_hash = :sess;
BEGIN;
DELETE FROM pending_displays WHERE session_hash = :sess RETURNING sealed, created_at;
COMMIT;
