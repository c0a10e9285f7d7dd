import FluentKit
import Foundation
import Storage

extension AuditIntegrity {
    /// The scheduled full check: a check of new entries starts at the newest checkpoint and cannot
    /// see an entry below it changed, deleted or reordered around the triggers; this walk from the
    /// first entry kept does, once every `fullCheckInterval`. Its result is recorded like any
    /// other and, while it says broken, every check of new entries reports it and no checkpoint is
    /// signed (``verifyAndRecord(full:floor:now:on:)``).
    ///
    /// Like ``runScheduled(now:on:)``: one query when nothing is due; else the floor row is locked
    /// (PostgreSQL `SKIP LOCKED`: one instance walks, the others leave the round to it), so
    /// retention cannot delete entries under the walk. Returns nil when it did not run here.
    package func runScheduledFullCheck(now: Date, on db: any Database) async throws -> AuditVerification? {
        guard try await isFullCheckDue(now: now, on: db) else { return nil }
        return try await db.transaction { tx in
            guard let floor = try await IntegrityStore.lockFloor(on: tx), try await isFullCheckDue(now: now, on: tx) else { return nil }
            return try await verifyAndRecord(full: true, floor: floor, now: now, on: tx).verification
        }
    }

    /// True when the last full check (scheduled or asked for) is older than the interval, or there is none.
    func isFullCheckDue(now: Date, on db: any Database) async throws -> Bool {
        guard let last = try await IntegrityStore.lastVerification(full: true, on: db) else { return true }
        return now.timeIntervalSince(last.verifiedAt) >= fullCheckInterval.seconds
    }

    /// The newest full check, for the admin page: it stays beside the newest check until a later
    /// full check replaces it.
    package func lastFullVerification(on db: any Database) async throws -> AuditVerification? {
        try await IntegrityStore.lastVerification(full: true, on: db)
    }
}
