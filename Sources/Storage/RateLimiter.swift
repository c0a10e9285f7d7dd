import FluentKit
import Foundation
import SQLKit

/// "At most `limit` events per `window`", e.g. one teleTAN per 30 seconds per officer.
package struct RateRule: Sendable, Equatable {
    package let name: String
    package let limit: Int
    package let window: Duration

    package init(name: String, limit: Int, window: Duration) {
        self.name = name
        self.limit = limit
        self.window = window
    }
}

/// Thrown by ``RateLimiter/consume(_:at:on:)`` when a rule is exhausted. Throwing (rather than
/// returning) makes the surrounding transaction roll back its own increment.
package struct RateLimitExceeded: Error, Sendable {
    package let rule: RateRule
    package let retryAfter: Duration
}

/// Sliding-window counters kept in the database, so that every portal instance behind a load
/// balancer sees the same counts.
///
/// Each window is cut into 60 slots; a count is the sum of the slots inside the window, so a
/// "rolling hour" is exact to the minute and costs at most 60 small rows per key, however many
/// events it counts. Incrementing is an upsert that row-locks the slot until the transaction
/// ends, so concurrent requests for one key are counted one after the other.
package struct RateLimiter: Sendable {
    static let slotsPerWindow: Int64 = 60

    package init() {}

    /// Counts one event for each (rule, key) and throws ``RateLimitExceeded`` if that takes any
    /// rule over its limit. Call it inside a transaction.
    package func consume(_ hits: [(rule: RateRule, key: String)], at now: Date, on db: any Database) async throws {
        for hit in hits {
            let slots = try await incrementAndRead(hit.rule, key: hit.key, at: now, on: db)
            let total = slots.reduce(0) { $0 + $1.hits }
            if total > hit.rule.limit {
                // The event just counted is not allowed, so it must not delay the retry.
                throw RateLimitExceeded(rule: hit.rule, retryAfter: retryAfter(hit.rule, slots: slots, excess: total - hit.rule.limit, now: now))
            }
        }
    }

    /// Counts one event for a limit shared by everyone (the global teleTAN limit), spread over
    /// `shards` counter rows so that concurrent transactions rarely wait for one another's row
    /// lock; the limit applies to the sum of all shards. Throws ``RateLimitExceeded`` when the
    /// event takes the sum over the limit, and returns the new sum otherwise.
    @discardableResult
    package func consumeShared(_ rule: RateRule, shards: Int, at now: Date, on db: any Database) async throws -> Int {
        let shard = "shard-\(Int.random(in: 0..<max(1, shards)))"
        let oldest = Self.oldestSlot(rule, at: now)
        let slots: [Slot]
        if isPostgreSQL(db) {
            // One statement (see incrementAndRead): the counted shard's slot from RETURNING, every
            // other shard's slots from the table.
            let (slot, expires) = Self.slotAndExpiry(rule, at: now)
            slots = try await sql(db).raw("""
                WITH counted AS (\(Self.countOne(rule, key: shard, slot: slot, expires: expires)) RETURNING slot, hits)
                SELECT slot, SUM(hits) AS hits FROM (
                    SELECT slot, hits FROM counted
                    UNION ALL
                    SELECT slot, hits FROM rate_slots
                    WHERE rule = \(bind: rule.name) AND slot >= \(bind: oldest) AND NOT (bucket = \(bind: shard) AND slot = \(bind: slot))
                ) AS window_slots
                GROUP BY slot ORDER BY slot
                """).all(decoding: Slot.self)
        } else {
            try await increment(rule, key: shard, at: now, on: db)
            slots = try await sql(db).raw("""
                SELECT slot, SUM(hits) AS hits FROM rate_slots
                WHERE rule = \(bind: rule.name) AND slot >= \(bind: oldest)
                GROUP BY slot ORDER BY slot
                """).all(decoding: Slot.self)
        }
        let total = slots.reduce(0) { $0 + $1.hits }
        if total > rule.limit {
            throw RateLimitExceeded(rule: rule, retryAfter: retryAfter(rule, slots: slots, excess: total - rule.limit, now: now))
        }
        return total
    }

    /// Counts one event without a limit (failed sign-ins) and returns the new total.
    @discardableResult
    package func record(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws -> Int {
        try await increment(rule, key: key, at: now, on: db)
        return try await count(rule, key: key, at: now, on: db)
    }

    /// Takes back the newest event counted for `key` (an attempt counted in advance that turned out
    /// not to count). Never goes below zero.
    package func unrecord(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws {
        let oldest = Self.oldestSlot(rule, at: now)
        try await sql(db).raw("""
            UPDATE rate_slots SET hits = hits - 1
            WHERE rule = \(bind: rule.name) AND bucket = \(bind: key) AND hits > 0 AND slot = (
                SELECT MAX(slot) FROM rate_slots
                WHERE rule = \(bind: rule.name) AND bucket = \(bind: key) AND slot >= \(bind: oldest) AND hits > 0)
            """).run()
    }

    /// Events counted for `key` within the rule's window ending at `now`.
    package func count(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws -> Int {
        try await slots(rule, key: key, at: now, on: db).reduce(0) { $0 + $1.hits }
    }

    /// Forgets all events for `key` (after a successful sign-in, say).
    package func reset(_ rule: RateRule, key: String, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM rate_slots WHERE rule = \(bind: rule.name) AND bucket = \(bind: key)").run()
    }

    /// Deletes slots that have left every window; the periodic cleanup calls it.
    package func purge(before now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM rate_slots WHERE expires_ms < \(bind: Self.milliseconds(now))").run()
    }

    // MARK: - Slots

    /// The slot an event at `now` counts in, and when that slot leaves every window.
    static func slotAndExpiry(_ rule: RateRule, at now: Date) -> (slot: Int64, expires: Int64) {
        let width = Self.slotWidth(rule)
        let slot = Self.milliseconds(now) / width
        return (slot, (slot + Self.slotsPerWindow + 1) * width)
    }

    /// Counts one event for `key` and returns the slots inside the window, the new count included.
    ///
    /// On PostgreSQL one statement, one round trip instead of two: the upsert returns the slot it
    /// counted in, and the window's other slots are read beside it (what a data-modifying CTE
    /// writes is not visible to the rest of its statement, so the counted slot must come from
    /// RETURNING). The upsert locks the slot's row as before. SQLite has no data-modifying CTEs:
    /// there it is the upsert and then the read.
    private func incrementAndRead(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws -> [Slot] {
        guard isPostgreSQL(db) else {
            try await increment(rule, key: key, at: now, on: db)
            return try await slots(rule, key: key, at: now, on: db)
        }
        let (slot, expires) = Self.slotAndExpiry(rule, at: now)
        return try await sql(db).raw("""
            WITH counted AS (\(Self.countOne(rule, key: key, slot: slot, expires: expires)) RETURNING slot, hits)
            SELECT slot, hits FROM counted
            UNION ALL
            SELECT slot, hits FROM rate_slots
            WHERE rule = \(bind: rule.name) AND bucket = \(bind: key) AND slot >= \(bind: Self.oldestSlot(rule, at: now)) AND slot <> \(bind: slot)
            ORDER BY slot
            """).all(decoding: Slot.self)
    }

    private func increment(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws {
        let (slot, expires) = Self.slotAndExpiry(rule, at: now)
        try await sql(db).raw(Self.countOne(rule, key: key, slot: slot, expires: expires)).run()
    }

    /// The upsert that counts one event in `key`'s slot; it row-locks the slot's row until the
    /// transaction ends. On its own, or as the data-modifying part of the one-statement reads.
    private static func countOne(_ rule: RateRule, key: String, slot: Int64, expires: Int64) -> SQLQueryString {
        """
        INSERT INTO rate_slots (rule, bucket, slot, hits, expires_ms)
        VALUES (\(bind: rule.name), \(bind: key), \(bind: slot), 1, \(bind: expires))
        ON CONFLICT (rule, bucket, slot) DO UPDATE SET hits = rate_slots.hits + 1
        """
    }

    private struct Slot: Decodable { let slot: Int64; let hits: Int }

    /// The first slot inside the rule's window ending at `now`.
    static func oldestSlot(_ rule: RateRule, at now: Date) -> Int64 {
        milliseconds(now) / slotWidth(rule) - slotsPerWindow + 1
    }

    private func slots(_ rule: RateRule, key: String, at now: Date, on db: any Database) async throws -> [Slot] {
        let oldest = Self.oldestSlot(rule, at: now)
        return try await sql(db).raw("""
            SELECT slot, hits FROM rate_slots
            WHERE rule = \(bind: rule.name) AND bucket = \(bind: key) AND slot >= \(bind: oldest)
            ORDER BY slot
            """).all(decoding: Slot.self)
    }

    /// How long until enough of the oldest slots have left the window to bring the count back
    /// under the limit.
    private func retryAfter(_ rule: RateRule, slots: [Slot], excess: Int, now: Date) -> Duration {
        let width = Self.slotWidth(rule)
        var released = 0
        for slot in slots {
            released += slot.hits
            if released >= excess {
                let freeAt = (slot.slot + Self.slotsPerWindow) * width
                return .milliseconds(max(1000, freeAt - Self.milliseconds(now)))
            }
        }
        return rule.window
    }

    static func slotWidth(_ rule: RateRule) -> Int64 {
        let windowMs = rule.window.components.seconds * 1000 + rule.window.components.attoseconds / 1_000_000_000_000_000
        return max(1, windowMs / slotsPerWindow)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// The SQL side of a Fluent database (both drivers provide it).
package func sql(_ db: any Database) -> any SQLDatabase {
    db as! any SQLDatabase
}

/// Whether `db` is PostgreSQL (else SQLite): for the few statements written for one of them.
package func isPostgreSQL(_ db: any Database) -> Bool {
    sql(db).dialect.name == "postgresql"
}

extension Duration {
    /// The duration in seconds, fractions included.
    package var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
