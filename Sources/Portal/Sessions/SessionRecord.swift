import FluentKit
import Foundation

/// A signed-in browser. The cookie holds a random id; the table holds only its keyed hash, so a
/// database dump does not let anyone take over a session.
final class SessionRecord: Model, @unchecked Sendable {
    static let schema = "sessions"

    @ID(custom: "id_hash", generatedBy: .user) var id: String?
    @Field(key: "username") var username: String
    /// Comma-separated role names, fixed at sign-in.
    @Field(key: "roles") var roles: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "last_seen_at") var lastSeenAt: Date

    init() {}

    init(idHash: String, username: String, roles: Set<Role>, now: Date) {
        self.id = idHash
        self.username = username
        self.roles = roles.sorted().map(\.rawValue).joined(separator: ",")
        self.createdAt = now
        self.lastSeenAt = now
    }

    /// A row read with plain SQL (``SessionStore/lookup(cookieValue:now:on:)``).
    init(idHash: String, username: String, roles: String, createdAt: Date, lastSeenAt: Date) {
        self.id = idHash
        self.username = username
        self.roles = roles
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        $id.exists = true
    }

    var roleSet: Set<Role> {
        Set(roles.split(separator: ",").compactMap { Role(rawValue: String($0)) })
    }
}

/// Tables the portal owns: sessions, one-use form nonces, and teleTANs waiting to be shown.
struct CreatePortalTables: AsyncMigration {
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
