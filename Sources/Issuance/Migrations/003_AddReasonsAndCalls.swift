import FluentKit

/// Migration 003 of the issuance feature: the reason or case reference of an EVENT request (shown
/// to the approver), the hotline call an issued teleTAN belongs to (for "My recent teleTANs"),
/// and why it was revoked. All nullable: rows written before have none.
struct AddReasonsAndCalls: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Issuance.AddReasonsAndCalls" }

    func prepare(on database: any Database) async throws {
        try await database.schema("event_requests").field("reason", .string).update()
        // One column per statement: SQLite adds one column per ALTER TABLE.
        for field in ["call_id", "revoke_reason", "revoke_note"] {
            try await database.schema("issued_teletans").field(.string(field), .string).update()
        }
    }

    func revert(on database: any Database) async throws {
        for field in ["call_id", "revoke_reason", "revoke_note"] {
            try await database.schema("issued_teletans").deleteField(.string(field)).update()
        }
        try await database.schema("event_requests").deleteField("reason").update()
    }
}
