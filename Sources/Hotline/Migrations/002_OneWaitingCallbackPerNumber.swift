import FluentKit
import Storage

/// Migration 002 of the hotline feature: a number waits in the callback queue at most once. Of
/// entries an earlier release let wait twice, the oldest stays; the others close as duplicates,
/// their contact data deleted.
struct OneWaitingCallbackPerNumber: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Hotline.OneWaitingCallbackPerNumber" }

    func prepare(on database: any Database) async throws {
        try await sql(database).raw("""
            UPDATE hotline_callbacks SET status = 'closed', outcome = 'duplicate', sealed_contact = NULL, phone_fingerprint = NULL,
                closed_at = created_at, taken_by = NULL, taken_at = NULL
            WHERE status = 'waiting' AND EXISTS (
                SELECT 1 FROM hotline_callbacks AS older
                WHERE older.status = 'waiting' AND older.phone_fingerprint = hotline_callbacks.phone_fingerprint
                  AND (older.created_at < hotline_callbacks.created_at
                       OR (older.created_at = hotline_callbacks.created_at AND older.id < hotline_callbacks.id)))
            """).run()
        try await sql(database).raw("""
            CREATE UNIQUE INDEX hotline_callbacks_one_waiting ON hotline_callbacks (phone_fingerprint) WHERE status = 'waiting'
            """).run()
    }

    func revert(on database: any Database) async throws {
        try await sql(database).raw("DROP INDEX hotline_callbacks_one_waiting").run()
    }
}
