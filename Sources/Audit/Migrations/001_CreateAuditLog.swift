import FluentKit
import SQLKit
import Storage

/// Migration 001 of this module. The audit table, its indexes, the chain head, and triggers that refuse UPDATE and DELETE so
/// the table stays append-only even for code (or people) with write access to it.
package struct CreateAuditLog: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Audit.CreateAuditLog" }

    package func prepare(on database: any Database) async throws {
        try await database.schema(AuditEntry.schema)
            .field("seq", .int64, .identifier(auto: false))
            .field("occurred_at", .datetime, .required)
            .field("actor", .string)
            .field("role", .string)
            .field("action", .string, .required)
            .field("outcome", .string, .required)
            .field("address", .string)
            .field("request_id", .string)
            .field("subject", .string)
            .field("details", .string, .required)
            .field("prev_hash", .string, .required)
            .field("hash", .string, .required)
            .create()
        let db = sql(database)
        for column in ["occurred_at", "actor", "action", "outcome", "subject"] {
            try await db.raw("CREATE INDEX audit_log_\(unsafeRaw: column) ON audit_log (\(unsafeRaw: column))").run()
        }
        try await database.schema(AuditHead.schema)
            .field("id", .int, .identifier(auto: false))
            .field("seq", .int64, .required)
            .field("hash", .string, .required)
            .create()
        try await AuditHead(seq: 0, hash: AuditChain.genesisHash).create(on: database)

        if isPostgreSQL(database) {
            try await db.raw("""
                CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
                FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()
                """).run()
            try await db.raw("""
                CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
                FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()
                """).run()
        } else {
            for operation in ["UPDATE", "DELETE"] {
                try await db.raw("""
                    CREATE TRIGGER audit_log_no_\(unsafeRaw: operation.lowercased()) BEFORE \(unsafeRaw: operation) ON audit_log
                    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END
                    """).run()
            }
        }
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(AuditHead.schema).delete()
        try await database.schema(AuditEntry.schema).delete()
        if isPostgreSQL(database) {
            try await sql(database).raw("DROP FUNCTION IF EXISTS audit_log_append_only()").run()
        }
    }
}
