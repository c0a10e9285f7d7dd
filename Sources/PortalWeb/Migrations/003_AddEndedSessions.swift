import FluentKit

/// Migration 003 of the web foundation: the sessions an admin ended (keyed hash and time), so that
/// the next request with such a cookie can say so instead of "your session has expired". Rows go
/// after the session lifetime, when the cookie could not be used anyway.
struct AddEndedSessions: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Portal.AddEndedSessions" }

    func prepare(on database: any Database) async throws {
        try await database.schema("ended_sessions")
            .field("id_hash", .string, .required)
            .field("ended_at", .datetime, .required)
            .unique(on: "id_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("ended_sessions").delete()
    }
}
