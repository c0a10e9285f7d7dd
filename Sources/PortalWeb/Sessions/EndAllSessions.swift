import Audit
import FluentKit
import Foundation
import Storage

/// Ends every session at once, after a database restore: a restored database brings back
/// sessions that were signed out or ended after the backup was taken, and their cookies would
/// work again. Each one is remembered as ended by an administrator (the browser says so), and
/// the ending is one audit entry (`sessions.end_all`, details: count and reason).
package enum EndAllSessions {
    package enum Reason: String, Sendable {
        /// `portal sessions end-all`, a step of the restore runbook.
        case command
        /// A checkpoint handed out earlier showed the database was restored from an older backup.
        case restoreDetected = "restore_detected"
    }

    /// Returns how many sessions were ended.
    @discardableResult
    package static func run(reason: Reason, now: Date, on db: any Database) async throws -> Int {
        try await db.transaction { db in
            struct Row: Decodable { let id_hash: String }
            let ended = try await sql(db).raw("DELETE FROM sessions RETURNING id_hash").all(decoding: Row.self)
            for row in ended {
                try await sql(db).raw("INSERT INTO ended_sessions (id_hash, ended_at) VALUES (\(bind: row.id_hash), \(bind: now))").run()
            }
            try await AuditLog().append(
                AuditEvent(action: .sessionsEndAll, outcome: .success, details: ["count": "\(ended.count)", "reason": reason.rawValue]),
                at: now, on: db)
            return ended.count
        }
    }
}

extension AuditAction {
    /// Every session was ended at once (details: count, reason).
    package static let sessionsEndAll: AuditAction = "sessions.end_all"
}
