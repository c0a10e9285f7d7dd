import AccessControl
import FluentKit
import Foundation

/// A signed-in browser. The cookie holds a random id; the table holds only its keyed hash, so a
/// database dump does not let anyone take over a session.
package final class SessionRecord: Model, @unchecked Sendable {
    package static let schema = "sessions"

    @ID(custom: "id_hash", generatedBy: .user) package var id: String?
    @Field(key: "username") package var username: String
    /// Comma-separated role names, fixed at sign-in.
    @Field(key: "roles") package var roles: String
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "last_seen_at") package var lastSeenAt: Date
    /// The client address it signed in from, then the one it was last seen from.
    @OptionalField(key: "address") package var address: String?

    package init() {}

    init(idHash: String, username: String, roles: Set<Role>, address: String?, now: Date) {
        self.id = idHash
        self.username = username
        self.roles = roles.joined
        self.createdAt = now
        self.lastSeenAt = now
        self.address = address
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

    package var roleSet: Set<Role> { Self.roleSet(roles) }

    /// The roles of the stored "officer,admin" form.
    static func roleSet(_ joined: String) -> Set<Role> {
        Set(joined.split(separator: ",").compactMap { Role(rawValue: String($0)) })
    }
}
