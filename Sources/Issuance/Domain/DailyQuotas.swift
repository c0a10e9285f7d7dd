import FluentKit
import Foundation
import SQLKit
import Storage

/// The daily quota of teleTANs: one for the whole portal, one for each health authority's EVENT
/// teleTANs. Each scope has a row per day in `daily_quotas` (its quota, what an administrator
/// added, what was used), so every instance on the database counts against the same number, and
/// the used counts of past days are the history the next days are predicted from
/// (``QuotaPrediction``). A day is the authority's (`--time-zone`): the quota starts again at
/// its midnight.
package struct DailyQuotas: Sendable {
    /// Today's state of one scope.
    package struct Row: Decodable, Sendable {
        package let scope: String
        package let day: String
        /// The quota of the day, from the prediction or the fixed quota.
        package let quota: Int
        /// The prediction before the factor; nil for the fixed quota.
        package let predicted: Int?
        /// The days predicted from, as JSON (``QuotaPrediction/Day``).
        package let basis: String
        /// Added by administrators today.
        package let extra: Int
        package let used: Int

        package var limit: Int { quota + extra }
        package var left: Int { max(0, limit - used) }

        package var basisDays: [QuotaPrediction.Day] {
            (try? JSONDecoder().decode([QuotaPrediction.Day].self, from: Data(basis.utf8))) ?? []
        }
    }

    /// The scope of every teleTAN of the portal.
    package static let portalScope = "portal"
    /// Rows are kept this long: the history reaches back ``QuotaPrediction/maximumDays``, the
    /// rest is for the administrator's view and the audit trail's context.
    static let keptDays = 90
    /// The most an administrator adds at once.
    package static let largestRaise = 100_000

    /// The scope of `authority`'s EVENT teleTANs.
    package static func scope(ofHealthAuthority authority: String) -> String {
        "health_authority:\(authority)"
    }

    let settings: DailyQuotaSettings
    let timeZone: TimeZone
    /// The portal's scope and every configured health authority's.
    package let scopes: [String]

    package init(settings: DailyQuotaSettings, timeZone: TimeZone, healthAuthorities: HealthAuthorities) {
        self.settings = settings
        self.timeZone = timeZone
        scopes = [Self.portalScope] + healthAuthorities.all.map { Self.scope(ofHealthAuthority: $0.id) }
    }

    package func day(at now: Date) -> QuotaDay {
        QuotaDay(now, in: timeZone)
    }

    /// Today's rows of every scope, made first where missing. The periodic work calls it every
    /// minute on every instance; it predicts a scope's day at most once, since the row is
    /// inserted only if none is there (the primary key is scope and day).
    @discardableResult
    package func prepare(at now: Date, on db: any Database) async throws -> [Row] {
        let today = day(at: now)
        var rows = try await sql(db).raw("""
            SELECT scope, day, quota, predicted, basis, extra, used FROM daily_quotas WHERE day = \(bind: today.text)
            """).all(decoding: Row.self)
        let missing = scopes.filter { scope in !rows.contains { $0.scope == scope } }
        for scope in missing {
            rows.append(try await ensure(scope, on: today, db: db))
        }
        return scopes.compactMap { scope in rows.first { $0.scope == scope } }
    }

    /// Takes one teleTAN from each of `scopes` for today, or throws ``DailyQuotaExhausted``
    /// (and the surrounding transaction gives back what was taken). Call it inside the issuing
    /// transaction: the conditional UPDATE row-locks the day's row until commit, so two
    /// instances at the last unit take it once.
    package func take(_ scopes: [String], at now: Date, on db: any Database) async throws {
        let today = day(at: now)
        for scope in scopes {
            if try await takeOne(scope, on: today, db: db) { continue }
            // No row yet (the first minutes after midnight): make it, then try once more.
            _ = try await ensure(scope, on: today, db: db)
            guard try await takeOne(scope, on: today, db: db) else {
                throw DailyQuotaExhausted(scope: scope, resetsAt: today.end(in: timeZone))
            }
        }
    }

    /// Gives back the units ``take(_:at:on:)`` took at `now` (the same day), for an issuance
    /// that made no teleTAN after its first transaction had committed (the remote path).
    package func giveBack(_ scopes: [String], at now: Date, on db: any Database) async throws {
        let today = day(at: now)
        for scope in scopes {
            try await sql(db).raw("""
                UPDATE daily_quotas SET used = used - 1 WHERE scope = \(bind: scope) AND day = \(bind: today.text) AND used > 0
                """).run()
        }
    }

    /// Adds `amount` to today's quota of `scope` until midnight, with who and why (kept in
    /// `daily_quota_raises` for the page, out of the audit trail: the reason is free text).
    /// Returns the day's row after the raise.
    package func raise(
        _ scope: String, by amount: Int, reason: String, raisedBy user: String, at now: Date, on db: any Database
    ) async throws -> Row {
        let today = day(at: now)
        _ = try await ensure(scope, on: today, db: db)
        try await sql(db).raw("""
            UPDATE daily_quotas SET extra = extra + \(bind: amount) WHERE scope = \(bind: scope) AND day = \(bind: today.text)
            """).run()
        try await sql(db).raw("""
            INSERT INTO daily_quota_raises (id, scope, day, amount, reason, raised_by, raised_at)
            VALUES (\(bind: UUID()), \(bind: scope), \(bind: today.text), \(bind: amount), \(bind: reason), \(bind: user), \(bind: now))
            """).run()
        return try await row(scope, on: today, db: db)!
    }

    /// One administrator's raise of a day's quota.
    package struct Raise: Decodable, Sendable {
        package let scope: String
        package let amount: Int
        package let reason: String
        package let raised_by: String
        package let raised_at: Date
    }

    /// Today's raises, oldest first.
    package func raises(at now: Date, on db: any Database) async throws -> [Raise] {
        try await sql(db).raw("""
            SELECT scope, amount, reason, raised_by, raised_at FROM daily_quota_raises
            WHERE day = \(bind: day(at: now).text) ORDER BY raised_at
            """).all(decoding: Raise.self)
    }

    /// Deletes the days past ``keptDays`` (the prediction's history), and the raises of every
    /// day before today: their reasons are free text, shown on the page for their day only; the
    /// day's row keeps the amount and the audit entry the number.
    package func purge(at now: Date, on db: any Database) async throws {
        let today = day(at: now)
        let oldest = today.adding(days: -Self.keptDays).text
        try await sql(db).raw("DELETE FROM daily_quotas WHERE day < \(bind: oldest)").run()
        try await sql(db).raw("DELETE FROM daily_quota_raises WHERE day < \(bind: today.text)").run()
    }

    // MARK: - Rows

    private func takeOne(_ scope: String, on day: QuotaDay, db: any Database) async throws -> Bool {
        // RETURNING tells whether the row was updated, on SQLite as on PostgreSQL.
        try await sql(db).raw("""
            UPDATE daily_quotas SET used = used + 1
            WHERE scope = \(bind: scope) AND day = \(bind: day.text) AND used < quota + extra
            RETURNING used
            """).first() != nil
    }

    /// The day's row of `scope`; predicted and inserted if there is none (another instance may
    /// insert it at the same moment: then its row stands).
    private func ensure(_ scope: String, on day: QuotaDay, db: any Database) async throws -> Row {
        if let row = try await row(scope, on: day, db: db) { return row }
        struct Past: Decodable { let day: String; let used: Int }
        let history = try await sql(db).raw("""
            SELECT day, used FROM daily_quotas
            WHERE scope = \(bind: scope) AND day >= \(bind: day.adding(days: -QuotaPrediction.maximumDays).text) AND day < \(bind: day.text)
            """).all(decoding: Past.self).compactMap { past in QuotaDay(text: past.day).map { QuotaPrediction.Day(day: $0, issued: past.used) } }
        let prediction = QuotaPrediction.make(for: day, history: history, settings: settings)
        let basis = String(decoding: try JSONEncoder().encode(prediction.basis), as: UTF8.self)
        try await sql(db).raw("""
            INSERT INTO daily_quotas (scope, day, quota, predicted, basis, extra, used)
            VALUES (\(bind: scope), \(bind: day.text), \(bind: prediction.quota), \(bind: prediction.predicted), \(bind: basis), 0, 0)
            ON CONFLICT (scope, day) DO NOTHING
            """).run()
        return try await row(scope, on: day, db: db)!
    }

    private func row(_ scope: String, on day: QuotaDay, db: any Database) async throws -> Row? {
        try await sql(db).raw("""
            SELECT scope, day, quota, predicted, basis, extra, used FROM daily_quotas
            WHERE scope = \(bind: scope) AND day = \(bind: day.text)
            """).first(decoding: Row.self)
    }
}

/// A scope's quota for today is used up.
package struct DailyQuotaExhausted: Error, Sendable {
    package let scope: String
    /// The authority's next midnight, when the quota starts again.
    package let resetsAt: Date
}
