import FluentKit
import SQLKit
import Storage

/// Migration 001 of the audit review: indexes for searching as an investigator types (issue 18),
/// each ending in `seq` so that "newest first" stays a keyset walk of one index.
/// - `lower(actor), seq`: Actor without regard to case. It replaces `(actor, seq)`, which no
///   query uses any more (one index less to write per entry).
/// - `substr(subject, 1, 12), seq`: a subject as the results table shortens it (twelve
///   characters and an ellipsis).
/// Expression indexes, the same text on SQLite and PostgreSQL; the queries repeat the expressions
/// exactly (`AuditSearch`), or neither database would use them.
package struct AddSearchIndexes: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "AuditReview.AddSearchIndexes" }

    package func prepare(on database: any Database) async throws {
        let db = sql(database)
        try await db.raw("CREATE INDEX audit_log_actor_lower_seq ON audit_log (lower(actor), seq)").run()
        try await db.raw("CREATE INDEX audit_log_subject_short_seq ON audit_log (substr(subject, 1, 12), seq)").run()
        try await db.raw("DROP INDEX IF EXISTS audit_log_actor_seq").run()
    }

    package func revert(on database: any Database) async throws {
        let db = sql(database)
        try await db.raw("CREATE INDEX IF NOT EXISTS audit_log_actor_seq ON audit_log (actor, seq)").run()
        try await db.raw("DROP INDEX IF EXISTS audit_log_subject_short_seq").run()
        try await db.raw("DROP INDEX IF EXISTS audit_log_actor_lower_seq").run()
    }
}
