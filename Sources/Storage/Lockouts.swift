import FluentKit
import Foundation
import SQLKit

/// "Refuse `key` until a given time", shared by all instances through the database.
/// Used by sign-in throttling: a locked username is refused without asking PAM.
public struct Lockouts: Sendable {
    public init() {}

    public func lock(scope: String, key: String, until: Date, on db: any Database) async throws {
        let untilMs = RateLimiter.milliseconds(until)
        try await sql(db).raw("""
            INSERT INTO lockouts (scope, lock_key, until_ms) VALUES (\(bind: scope), \(bind: key), \(bind: untilMs))
            ON CONFLICT (scope, lock_key) DO UPDATE SET until_ms = \(bind: untilMs)
            """).run()
    }

    /// The end of an active lock, or nil.
    public func lockedUntil(scope: String, key: String, now: Date, on db: any Database) async throws -> Date? {
        struct Row: Decodable { let until_ms: Int64 }
        let row = try await sql(db).raw("""
            SELECT until_ms FROM lockouts WHERE scope = \(bind: scope) AND lock_key = \(bind: key)
            """).first(decoding: Row.self)
        guard let row, row.until_ms > RateLimiter.milliseconds(now) else { return nil }
        return Date(timeIntervalSince1970: Double(row.until_ms) / 1000)
    }

    public func purge(before now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM lockouts WHERE until_ms < \(bind: RateLimiter.milliseconds(now))").run()
    }
}
