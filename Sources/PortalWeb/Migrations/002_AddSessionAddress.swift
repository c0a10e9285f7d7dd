import FluentKit

/// Migration 002 of the web foundation: the client address a session signed in from (and was
/// last seen from), for the admins' list of signed-in sessions.
struct AddSessionAddress: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Portal.AddSessionAddress" }

    func prepare(on database: any Database) async throws {
        try await database.schema(SessionRecord.schema).field("address", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(SessionRecord.schema).deleteField("address").update()
    }
}
