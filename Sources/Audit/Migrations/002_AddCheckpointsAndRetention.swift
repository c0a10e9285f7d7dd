import FluentKit
import SQLKit
import Storage

/// Migration 002 of this module: signed checkpoints, recorded verifications, the retention floor,
/// the one exception to append-only (DELETE of entries at or below the floor), and composite
/// indexes for the admin search (`WHERE actor = ? ORDER BY seq DESC LIMIT n`).
package struct AddCheckpointsAndRetention: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Audit.AddCheckpointsAndRetention" }

    /// Columns searched with "newest first": each gets an index ending in seq, which also serves
    /// plain equality, so the single-column indexes of migration 001 are dropped (prefixes).
    static let searchColumns = ["actor", "action", "outcome", "subject", "address"]
    static let replacedIndexColumns = ["actor", "action", "outcome", "subject"]

    package func prepare(on database: any Database) async throws {
        try await database.schema(IntegrityStore.checkpointsTable)
            .field("id", .int64, .identifier(auto: true))
            .field("seq", .int64, .required)
            .field("hash", .string, .required)
            .field("signed_at", .datetime, .required)
            .field("key_id", .string, .required)
            .field("signature", .string, .required)
            .create()
        try await database.schema(IntegrityStore.verificationsTable)
            .field("id", .int64, .identifier(auto: true))
            .field("verified_at", .datetime, .required)
            .field("full", .bool, .required)
            .field("from_seq", .int64, .required)
            .field("to_seq", .int64, .required)
            .field("checked", .int64, .required)
            .field("first_bad_seq", .int64)
            .field("problem", .string)
            .create()
        try await database.schema(IntegrityStore.floorTable)
            .field("id", .int, .identifier(auto: false))
            .field("seq", .int64, .required)
            .field("hash", .string, .required)
            .create()
        let db = sql(database)
        try await db.raw("INSERT INTO audit_floor (id, seq, hash) VALUES (1, 0, \(bind: AuditChain.genesisHash))").run()
        try await db.raw("CREATE INDEX audit_checkpoints_seq ON audit_checkpoints (seq)").run()
        try await db.raw("CREATE INDEX audit_verifications_verified_at ON audit_verifications (verified_at)").run()

        for column in Self.searchColumns {
            try await db.raw("CREATE INDEX audit_log_\(unsafeRaw: column)_seq ON audit_log (\(unsafeRaw: column), seq)").run()
        }
        for column in Self.replacedIndexColumns {
            try await db.raw("DROP INDEX IF EXISTS audit_log_\(unsafeRaw: column)").run()
        }

        if isPostgreSQL(database) {
            // Same function name as 001, so its triggers (UPDATE OR DELETE per row, TRUNCATE per
            // statement) now use this body. Nested IFs: OLD is unset in the TRUNCATE trigger.
            try await db.raw("""
                CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        IF OLD.seq <= (SELECT seq FROM audit_floor WHERE id = 1) THEN RETURN OLD; END IF;
                    END IF;
                    RAISE EXCEPTION 'audit_log is append-only';
                END $$
                """).run()
            try await db.raw("""
                CREATE OR REPLACE FUNCTION audit_floor_only_up() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'UPDATE' THEN
                        IF NEW.seq >= OLD.seq AND NEW.id = OLD.id THEN RETURN NEW; END IF;
                    END IF;
                    RAISE EXCEPTION 'audit_floor only moves up';
                END $$
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_floor_no_lowering BEFORE UPDATE OR DELETE ON audit_floor
                FOR EACH ROW EXECUTE FUNCTION audit_floor_only_up()
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_floor_no_truncate BEFORE TRUNCATE ON audit_floor
                FOR EACH STATEMENT EXECUTE FUNCTION audit_floor_only_up()
                """).run()
        } else {
            try await db.raw("DROP TRIGGER IF EXISTS audit_log_no_delete").run()
            try await db.raw("""
                CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
                WHEN OLD.seq > (SELECT seq FROM audit_floor WHERE id = 1)
                BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_floor_no_lowering BEFORE UPDATE ON audit_floor
                WHEN NEW.seq < OLD.seq OR NEW.id <> OLD.id
                BEGIN SELECT RAISE(ABORT, 'audit_floor only moves up'); END
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_floor_no_delete BEFORE DELETE ON audit_floor
                BEGIN SELECT RAISE(ABORT, 'audit_floor only moves up'); END
                """).run()
        }
    }

    package func revert(on database: any Database) async throws {
        let db = sql(database)
        if isPostgreSQL(database) {
            try await db.raw("""
                CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$
                """).run()
        } else {
            try await db.raw("DROP TRIGGER IF EXISTS audit_log_no_delete").run()
            try await db.raw("""
                CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END
                """).run()
        }
        for column in Self.replacedIndexColumns {
            try await db.raw("CREATE INDEX IF NOT EXISTS audit_log_\(unsafeRaw: column) ON audit_log (\(unsafeRaw: column))").run()
        }
        for column in Self.searchColumns {
            try await db.raw("DROP INDEX IF EXISTS audit_log_\(unsafeRaw: column)_seq").run()
        }
        try await database.schema(IntegrityStore.floorTable).delete()
        try await database.schema(IntegrityStore.verificationsTable).delete()
        try await database.schema(IntegrityStore.checkpointsTable).delete()
        if isPostgreSQL(database) {
            try await db.raw("DROP FUNCTION IF EXISTS audit_floor_only_up()").run()
        }
    }
}
