import FluentKit
import Foundation
import SQLKit

/// "Refuse `key` until a given time", shared by all instances through the database.
/// Used by sign-in throttling: a locked username is refused without asking PAM.
package struct Lockouts: Sendable {
    package init() {}

    package func lock(scope: String, key: String, until: Date, on db: any Database) async throws {
        let untilMs = RateLimiter.milliseconds(until)
        try await sql(db).raw("""
            INSERT INTO lockouts (scope, lock_key, until_ms) VALUES (\(bind: scope), \(bind: key), \(bind: untilMs))
            ON CONFLICT (scope, lock_key) DO UPDATE SET until_ms = \(bind: untilMs)
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

    package func purge(before now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM lockouts WHERE until_ms < \(bind: RateLimiter.milliseconds(now))").run()
    }
}
