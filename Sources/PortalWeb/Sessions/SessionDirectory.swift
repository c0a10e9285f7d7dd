import AccessControl
import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage
import TeleTAN

/// The admins' view of who is signed in, and ending a session from there. A session is named by
/// a handle derived from its database key, never by its id (the cookie) or that key itself.
package struct SessionDirectory: Sendable {
    package struct Entry: Sendable, Equatable {
        package let handle: String
        package let username: String
        package let roles: Set<Role>
        package let signedInAt: Date
        package let lastSeenAt: Date
        package let address: String?
        /// The database key, for comparing with the admin's own session; not shown.
        let sessionHash: String

        package func belongs(to user: SignedInUser) -> Bool { sessionHash == user.sessionHash }
    }

    let store: SessionStore

    package init(store: SessionStore) {
        self.store = store
    }

    /// Sessions that are still active (of one user, if given), longest signed in first.
    package func active(of username: String? = nil, now: Date, on db: any Database) async throws -> [Entry] {
        struct Row: Decodable {
            let id_hash: String; let username: String; let roles: String
            let created_at: Date; let last_seen_at: Date; let address: String?
        }
        let query = sql(db).select().columns("id_hash", "username", "roles", "created_at", "last_seen_at", "address").from("sessions")
            .where("last_seen_at", .greaterThanOrEqual, SQLBind(now.addingTimeInterval(-store.idleTimeout.seconds)))
            .where("created_at", .greaterThanOrEqual, SQLBind(now.addingTimeInterval(-store.lifetime.seconds)))
            .orderBy("created_at").orderBy("username")
        let rows = try await (username.map { query.where("username", .equal, SQLBind($0)) } ?? query).all(decoding: Row.self)
        return rows.map { row in
            Entry(
                handle: Self.handle(of: row.id_hash), username: row.username,
                roles: SessionRecord.roleSet(row.roles),
                signedInAt: row.created_at, lastSeenAt: row.last_seen_at, address: row.address, sessionHash: row.id_hash)
        }
    }

    /// The active session of `username` a handle names, if it still exists.
    package func find(handle: String, of username: String, now: Date, on db: any Database) async throws -> Entry? {
        try await active(of: username, now: now, on: db).first { $0.handle == handle }
    }

    /// Ends the session on an admin's word; false when it had ended already (so it is audited
    /// once). Its owner's next request is told an admin ended it.
    package func end(_ entry: Entry, now: Date, on db: any Database) async throws -> Bool {
        try await store.endByAdmin(sessionHash: entry.sessionHash, now: now, on: db)
    }

    /// 32 hex digits of SHA-256 over the session's key: stable while it lasts, useless as a cookie.
    static func handle(of sessionHash: String) -> String {
        String(KeyedHasher.hex(SHA256.hash(data: Data("session-handle\u{0}\(sessionHash)".utf8))).prefix(32))
    }
}
