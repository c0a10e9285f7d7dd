import FluentKit
import Foundation
import SQLKit

/// "Refuse `key` until a given time", shared by all instances through the database.
/// Used by sign-in throttling: a locked username is refused without asking PAM.
package struct Lockouts: Sendable {
    package init() {}

    /// Locks `key` until `until`. A row whose lock ran out but was not purged yet starts its
    /// refusal count again, so that the new lock counts only its own refusals (the ended one's
    /// count is lost if the cleanup had not written it yet: at most a minute's worth, rare).
    package func lock(scope: String, key: String, until: Date, now: Date, on db: any Database) async throws {
        try await sql(db).raw("""
            INSERT INTO lockouts (scope, lock_key, until_ms) VALUES (\(bind: scope), \(bind: key), \(bind: RateLimiter.milliseconds(until)))
            ON CONFLICT (scope, lock_key) DO UPDATE SET until_ms = excluded.until_ms,
                refused = CASE WHEN lockouts.until_ms > \(bind: RateLimiter.milliseconds(now)) THEN lockouts.refused ELSE 0 END
            """).run()
    }

    /// The end of an active lock, or nil.
    package func lockedUntil(scope: String, key: String, now: Date, on db: any Database) async throws -> Date? {
        struct Row: Decodable { let until_ms: Int64 }
        let row = try await sql(db).raw("""
            SELECT until_ms FROM lockouts WHERE scope = \(bind: scope) AND lock_key = \(bind: key)
            """).first(decoding: Row.self)
        guard let row, row.until_ms > RateLimiter.milliseconds(now) else { return nil }
        return Date(timeIntervalSince1970: Double(row.until_ms) / 1000)
    }

    /// The end of an active lock of `key`, and the events `rule` counted for it, in one round trip
    /// (the guessing protection asks both on every `/registrationToken`).
    package func lockAndCount(scope: String, key: String, counting rule: RateRule, at now: Date,
                             on db: any Database) async throws -> (lockedUntil: Date?, count: Int) {
        struct Row: Decodable { let until_ms: Int64?; let hits: Int }
        let oldest = RateLimiter.oldestSlot(rule, at: now)
        let row = try await sql(db).raw("""
            SELECT (SELECT until_ms FROM lockouts WHERE scope = \(bind: scope) AND lock_key = \(bind: key)) AS until_ms,
                   (SELECT COALESCE(SUM(hits), 0) FROM rate_slots
                    WHERE rule = \(bind: rule.name) AND bucket = \(bind: key) AND slot >= \(bind: oldest)) AS hits
            """).first(decoding: Row.self)
        let locked = row?.until_ms.flatMap { $0 > RateLimiter.milliseconds(now) ? Date(timeIntervalSince1970: Double($0) / 1000) : nil }
        return (locked, row?.hits ?? 0)
    }

    package struct ActiveLock: Sendable, Equatable {
        package let scope: String
        package let key: String
        package let until: Date
    }

    /// Locks still in force in the given scopes, the soonest to end first.
    package func active(scopes: [String], now: Date, on db: any Database) async throws -> [ActiveLock] {
        struct Row: Decodable { let scope: String; let lock_key: String; let until_ms: Int64 }
        let rows = try await sql(db).raw("""
            SELECT scope, lock_key, until_ms FROM lockouts
            WHERE scope IN (\(binds: scopes)) AND until_ms > \(bind: RateLimiter.milliseconds(now))
            ORDER BY until_ms, scope, lock_key
            """).all(decoding: Row.self)
        return rows.map { ActiveLock(scope: $0.scope, key: $0.lock_key, until: Date(timeIntervalSince1970: Double($0.until_ms) / 1000)) }
    }

    /// Counts one attempt the lock refused. Returns how many it has refused so far (1 for the
    /// first), or nil when no lock of that key is in force.
    package func refuse(scope: String, key: String, now: Date, on db: any Database) async throws -> Int? {
        struct Row: Decodable { let refused: Int }
        return try await sql(db).raw("""
            UPDATE lockouts SET refused = refused + 1
            WHERE scope = \(bind: scope) AND lock_key = \(bind: key) AND until_ms > \(bind: RateLimiter.milliseconds(now))
            RETURNING refused
            """).first(decoding: Row.self)?.refused
    }

    /// A lock that was lifted or ran out, with the attempts it refused.
    package struct EndedLock: Sendable, Equatable {
        package let scope: String
        package let key: String
        package let refused: Int
    }

    /// Ends a lock before its time. Nil when there was none in force (so it is audited once).
    package func lift(scope: String, key: String, now: Date, on db: any Database) async throws -> EndedLock? {
        struct Row: Decodable { let refused: Int }
        let row = try await sql(db).raw("""
            DELETE FROM lockouts WHERE scope = \(bind: scope) AND lock_key = \(bind: key)
            AND until_ms > \(bind: RateLimiter.milliseconds(now)) RETURNING refused
            """).first(decoding: Row.self)
        return row.map { EndedLock(scope: scope, key: key, refused: $0.refused) }
    }

    /// Deletes the locks that ran out and returns them, so that what they refused can be recorded.
    /// Each row is deleted by one instance only, so several running this at once count nothing twice.
    package func purge(before now: Date, on db: any Database) async throws -> [EndedLock] {
        struct Row: Decodable { let scope: String; let lock_key: String; let refused: Int }
        return try await sql(db).raw("""
            DELETE FROM lockouts WHERE until_ms < \(bind: RateLimiter.milliseconds(now)) RETURNING scope, lock_key, refused
            """).all(decoding: Row.self).map { EndedLock(scope: $0.scope, key: $0.lock_key, refused: $0.refused) }
    }
}
