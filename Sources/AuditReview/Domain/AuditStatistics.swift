import Audit
import FluentKit
import Foundation
import SQLKit
import Storage

/// Counts for the charts, straight from the audit trail: per hour in SQL, then summed into the
/// authority's days in Swift (exact wherever the zone's offset is whole hours, as in Germany).
package struct AuditStatistics: Sendable {
    /// What the charts count.
    package enum Series: String, Sendable, CaseIterable {
        /// teleTANs issued.
        case issued
        /// Issuances refused (a limit, a missing check, a used approval, ...).
        case refused
        /// Sign-ins that failed or were refused (wrong password, locked).
        case failedSignIns = "failed_signins"

        var condition: (action: String, outcome: String, equal: Bool) {
            switch self {
            case .issued: (AuditAction.teleTANIssue.rawValue, "success", true)
            case .refused: (AuditAction.teleTANIssue.rawValue, "refused", true)
            case .failedSignIns: (AuditAction.signIn.rawValue, "success", false)
            }
        }
    }

    package init() {}

    /// Entries of `series` per hour since `since`, keyed by the hour's start.
    package func perHour(_ series: Series, since: Date, on db: any Database) async throws -> [Date: Int] {
        struct Row: Decodable { let hour: Int64; let n: Int }
        let (action, outcome, equal) = series.condition
        let rows = try await sql(db).raw("""
            SELECT \(unsafeRaw: Self.hourExpression(db)) AS hour, COUNT(*) AS n FROM audit_log
            WHERE action = \(bind: action) AND outcome \(unsafeRaw: equal ? "=" : "<>") \(bind: outcome) AND occurred_at >= \(bind: since)
            GROUP BY 1
            """).all(decoding: Row.self)
        return Dictionary(uniqueKeysWithValues: rows.map { (Date(timeIntervalSince1970: Double($0.hour) * 3600), $0.n) })
    }

    /// teleTANs issued per user per hour since `since`.
    package func issuedPerUserPerHour(since: Date, on db: any Database) async throws -> [(user: String, hour: Date, count: Int)] {
        struct Row: Decodable { let actor: String?; let hour: Int64; let n: Int }
        let rows = try await sql(db).raw("""
            SELECT actor, \(unsafeRaw: Self.hourExpression(db)) AS hour, COUNT(*) AS n FROM audit_log
            WHERE action = \(bind: AuditAction.teleTANIssue.rawValue) AND outcome = 'success' AND occurred_at >= \(bind: since)
            GROUP BY 1, 2
            """).all(decoding: Row.self)
        return rows.map { ($0.actor ?? "-", Date(timeIntervalSince1970: Double($0.hour) * 3600), $0.n) }
    }

    /// Whole hours since 1970 (UTC) of `occurred_at`: PostgreSQL stores a timestamp, SQLite the
    /// seconds as a number.
    private static func hourExpression(_ db: any Database) -> String {
        isPostgreSQL(db) ? "CAST(floor(extract(epoch FROM occurred_at) / 3600) AS BIGINT)" : "CAST(occurred_at / 3600 AS INTEGER)"
    }
}
