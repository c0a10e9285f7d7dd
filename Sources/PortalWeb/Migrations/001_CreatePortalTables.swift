import FluentKit

/// Migration 001 of the web foundation: sessions, used one-use form nonces, and teleTANs waiting
/// to be shown. Shipped before the portal was split into feature modules, so it also creates
/// `pending_displays`, which the issuance feature owns; like every shipped migration it is never
/// edited (a later change to a table is a new numbered migration next to its store).
struct CreatePortalTables: AsyncMigration {
    /// What databases record it under (the module it was first shipped in): fixed forever.
    var name: String { "Portal.CreatePortalTables" }

    func prepare(on database: any Database) async throws {
        try await database.schema(SessionRecord.schema)
            .field("id_hash", .string, .identifier(auto: false))
            .field("username", .string, .required)
            .field("roles", .string, .required)
            .field("created_at", .datetime, .required)
            .field("last_seen_at", .datetime, .required)
            .create()
        try await database.schema("form_nonces")
            .field("nonce_hash", .string, .identifier(auto: false))
            .field("session_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .create()
        // A teleTAN between the POST that issued it and the page that shows it, encrypted with a
        // key derived from the server secret; deleted when shown.
        try await database.schema("pending_displays")
            .field("session_hash", .string, .identifier(auto: false))
            .field("sealed", .string, .required)
            .field("created_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("pending_displays").delete()
        try await database.schema("form_nonces").delete()
        try await database.schema(SessionRecord.schema).delete()
    }
}
