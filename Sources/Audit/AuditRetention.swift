import FluentKit
import Foundation
import SQLKit
import Storage

/// What one run of the scheduled job did, for the caller's log.
package struct AuditMaintenanceReport: Sendable, Equatable {
    /// The checkpoint signed because the last one was older than the interval.
    package var checkpoint: AuditCheckpoint?
    /// The checkpoint at the retention cut, when the floor moved.
    package var retentionCheckpoint: AuditCheckpoint?
    package var deletedEntries = 0
    /// Set when a verification found the trail broken: nothing was signed or deleted after it.
    package var brokenVerification: AuditVerification?
}

extension AuditIntegrity {
    /// Entries deleted per statement: short statements, so appends and pages interleave.
    static let deletionBatch: Int64 = 10_000

    /// The periodic job: sign a checkpoint when the latest is older than the interval, then apply
    /// retention. Instances serialise on the floor row (PostgreSQL `FOR UPDATE`; SQLite has one
    /// connection), so two never sign or move the floor for the same moment. Order inside the
    /// lock: verify, sign, store, move the floor, then append the audit entries (they lie beyond
    /// every checkpoint signed here). The deletion itself runs afterwards in batches.
    @discardableResult
    package func runScheduled(now: Date, on db: any Database) async throws -> AuditMaintenanceReport {
        guard signer != nil else { return AuditMaintenanceReport() }
        var report = try await db.transaction { tx in
            try await signAndMoveFloor(now: now, on: tx)
        }
        guard report.brokenVerification == nil else { return report }
        report.deletedEntries = try await deleteBelowFloor(on: db)
        if report.deletedEntries > 0 {
            let floor = try await IntegrityStore.floor(on: db)
            try await AuditLog().append(AuditEvent(action: .auditRetention, outcome: .success, details: [
                "cut_seq": "\(floor.seq)", "deleted": "\(report.deletedEntries)",
            ]), at: now, on: db)
        }
        return report
    }

    private func signAndMoveFloor(now: Date, on tx: any Database) async throws -> AuditMaintenanceReport {
        guard let signer else { return AuditMaintenanceReport() }
        var report = AuditMaintenanceReport()
        let floor = try await IntegrityStore.floor(lock: true, on: tx)
        let latest = try await IntegrityStore.latestSignedAt(on: tx)
        if latest.map({ now.timeIntervalSince($0) >= checkpointInterval.seconds }) ?? true {
            do {
                report.checkpoint = try await checkpointNow(now: now, on: tx)
            } catch AuditIntegrityError.chainBroken(let verification) {
                report.brokenVerification = verification
                return report
            }
        }

        let cutoff = now.addingTimeInterval(-retention.seconds)
        let head = try await IntegrityStore.head(on: tx)
        guard let cut = try await retentionCut(before: cutoff, through: head.seq, on: tx), cut > floor.seq else { return report }
        // Never delete what was not verified: floor..cut, against the checkpoints in it.
        let checkpoints = try await trustedCheckpoints(above: floor.seq, through: cut, on: tx)
        let walk = try await AuditChainVerifier().verify(from: floor, through: cut, checkpoints: checkpoints, on: tx)
        guard walk.isIntact, walk.lastSeq == cut else {
            let verification = AuditVerification(
                verifiedAt: AuditChain.truncatedToMilliseconds(now), full: false, fromSeq: floor.seq + 1,
                toSeq: walk.firstBrokenSeq ?? walk.lastSeq, checkedEntries: walk.checkedEntries,
                firstBrokenSeq: walk.firstBrokenSeq ?? walk.lastSeq + 1, problem: walk.problem ?? "entry \(walk.lastSeq + 1) is missing")
            try await IntegrityStore.record(verification, on: tx)
            report.brokenVerification = verification
            return report
        }
        let checkpoint = try signer.sign(seq: cut, hash: walk.lastHash, at: now)
        try await IntegrityStore.store(checkpoint, on: tx)
        try await IntegrityStore.moveFloor(to: .init(seq: cut, hash: walk.lastHash), on: tx)
        // Verification results age out with the entries they speak about.
        try await IntegrityStore.deleteVerifications(before: cutoff, on: tx)
        try await AuditLog().append(AuditEvent(action: .auditCheckpoint, outcome: .success, details: ["seq": "\(cut)", "reason": "retention"]), at: now, on: tx)
        report.retentionCheckpoint = checkpoint
        return report
    }

    /// The highest seq written before `cutoff` (entries are appended in time order, give or take
    /// the milliseconds between taking the time and taking the head lock).
    private func retentionCut(before cutoff: Date, through headSeq: Int64, on db: any Database) async throws -> Int64? {
        struct Row: Decodable { let cut: Int64? }
        return try await sql(db).raw("""
            SELECT MAX(seq) AS cut FROM audit_log WHERE occurred_at < \(bind: cutoff) AND seq <= \(bind: headSeq)
            """).first(decoding: Row.self)?.cut
    }

    /// Deletes entries at or below the floor, oldest first, a batch per statement; also what an
    /// interrupted earlier run left. Returns how many went.
    private func deleteBelowFloor(on db: any Database) async throws -> Int {
        struct Lowest: Decodable { let lowest: Int64? }
        struct Count: Decodable { let n: Int64 }
        let floor = try await IntegrityStore.floor(on: db)
        var deleted = 0
        while true {
            guard let lowest = try await sql(db).raw("SELECT MIN(seq) AS lowest FROM audit_log").first(decoding: Lowest.self)?.lowest,
                  lowest <= floor.seq else { break }
            let upper = min(floor.seq, lowest + Self.deletionBatch - 1)
            let count = try await sql(db).raw("SELECT COUNT(*) AS n FROM audit_log WHERE seq <= \(bind: upper)").first(decoding: Count.self)?.n ?? 0
            try await sql(db).raw("DELETE FROM audit_log WHERE seq <= \(bind: upper)").run()
            deleted += Int(count)
        }
        return deleted
    }
}
