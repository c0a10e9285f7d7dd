import FluentKit

/// Migration 002 of the issuance feature: EVENT teleTAN requests waiting for a second person's
/// approval (`--event-approval two-person`).
struct CreateEventRequests: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Issuance.CreateEventRequests" }

    func prepare(on database: any Database) async throws {
        try await database.schema("event_requests")
            .id()
            .field("requested_by", .string, .required)
            .field("health_authority", .string, .required)
            .field("requested_at", .datetime, .required)
            .field("status", .string, .required)
            .field("decided_by", .string)
            .field("decided_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("event_requests").delete()
    }
}
