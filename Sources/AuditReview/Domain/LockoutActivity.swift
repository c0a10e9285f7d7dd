import AccessControl
import Audit
import FluentKit
import Foundation
import SQLKit
import Storage

/// What led to a sign-in lock, from the audit trail: the recent failed sign-ins of a locked
/// username (and the addresses they came from) or from a locked address (and the names typed).
package struct LockoutActivity: Sendable {
    package struct Summary: Sendable, Equatable {
        /// Failed or refused sign-ins since the last successful one (among the recent ones).
        package let failures: Int
        /// For a username the addresses, for an address the usernames; newest first, distinct.
        package let others: [String]
        package let lastAttempt: Date?
    }

    /// How many of the newest sign-in entries are looked at (a lock follows five failures; a
    /// storm is summed up in the trail, not written per attempt).
    static let recent = 100

    package init() {}

    /// How many of the newest sign-in entries from IPv6 addresses are looked at for a /64's lock
    /// (its addresses are found by their key, not by a column).
    static let recentIPv6 = 2000

    /// `scope` is `user` (the key is the lower-cased username) or `address` (an ``AddressKey``:
    /// an address, or an IPv6 /64).
    package func summary(scope: String, key: String, on db: any Database) async throws -> Summary {
        var query = sql(db).select().column("occurred_at").column("actor").column("address").column("outcome").from("audit_log")
            .where("action", .equal, SQLBind(AuditAction.signIn.rawValue))
        let slash64 = scope == "address" && key.hasSuffix("/64")
        // `lower(actor)` as migration AuditReview.AddSearchIndexes indexes it.
        query = scope == "user" ? query.where(SQLRaw("lower(actor)"), .equal, SQLBind(key))
            : slash64 ? query.where("address", .like, SQLBind("%:%"))
            : query.where("address", .equal, SQLBind(key))
        struct Row: Decodable { let occurred_at: Date; let actor: String?; let address: String?; let outcome: String }
        var rows = try await query.orderBy("seq", .descending).limit(slash64 ? Self.recentIPv6 : Self.recent).all(decoding: Row.self)
        if slash64 { rows = Array(rows.filter { $0.address.map(AddressKey.of) == key }.prefix(Self.recent)) }
        let failed = rows.prefix { $0.outcome != AuditEvent.Outcome.success.rawValue }
        var others: [String] = []
        for row in failed {
            if let other = scope == "user" ? row.address : row.actor, !others.contains(other) { others.append(other) }
        }
        return Summary(failures: failed.count, others: others, lastAttempt: rows.first?.occurred_at)
    }
}
