import FluentKit
import Foundation
import SQLKit
import Storage

/// What one run of the scheduled job did, for the caller's log.
package struct AuditMaintenanceReport: Sendable, Equatable {
    /// The checkpoint of the head, signed because the last one was older than the interval.
    package var checkpoint: AuditCheckpoint?
    /// The checkpoint at the retention cut, when the floor moved.
    package var retentionCheckpoint: AuditCheckpoint?
    package var deletedEntries = 0
    /// Set when a verification found the trail broken: nothing was signed or deleted after it.
    package var brokenVerification: AuditVerification?
}

extension AuditIntegrity {
    /// The periodic job (every minute on every instance): when the head checkpoint (the one
    /// with the highest seq) is older than the interval, verify and sign a checkpoint of the head,
    /// then apply retention. So retention runs at most once per interval, and its checkpoints
    /// (below the head) never make the head checkpoint look fresh.
    ///
    /// When nothing is due, one query and no lock. Otherwise, in one transaction: lock the floor
    /// row (PostgreSQL `FOR UPDATE SKIP LOCKED`: an instance that finds it held leaves the round
    /// to the holder; SQLite has one connection), check again that a checkpoint is due, verify
    /// and sign the head, verify floor..cut, sign at the cut, move the floor, and append the audit
    /// entries last, so the chain head (`audit_head FOR UPDATE` on PostgreSQL) is locked only
    /// from then to the commit. The deletion runs afterwards in batches, by the run that moved
    /// the floor.
    @discardableResult
    package func runScheduled(now: Date, on db: any Database) async throws -> AuditMaintenanceReport {
        guard let signer, try await isCheckpointDue(now: now, on: db) else { return AuditMaintenanceReport() }
        let signed = try await db.transaction { tx in
            try await signAndMoveFloor(signer: signer, now: now, on: tx)
        }
        guard var report = signed else { return AuditMaintenanceReport() }
        if let cut = report.retentionCheckpoint?.seq {
            report.deletedEntries = try await deleteEntries(through: cut, on: db)
            try await AuditLog().append(AuditEvent(action: .auditRetention, outcome: .success, details: [
                "cut_seq": "\(cut)", "deleted": "\(report.deletedEntries)",
            ]), at: now, on: db)
        }
        return report
    }

    /// True when the head checkpoint is older than the interval, or there is none.
    func isCheckpointDue(now: Date, on db: any Database) async throws -> Bool {
        guard let signedAt = try await IntegrityStore.headCheckpointSignedAt(on: db) else { return true }
        return now.timeIntervalSince(signedAt) >= checkpointInterval.seconds
    }

    /// nil: another instance holds the floor, or it signed since the check without the lock.
    private func signAndMoveFloor(signer: CheckpointSigner, now: Date, on tx: any Database) async throws -> AuditMaintenanceReport? {
        guard let floor = try await IntegrityStore.lockFloor(on: tx), try await isCheckpointDue(now: now, on: tx) else { return nil }
        var report = AuditMaintenanceReport()
        let checkpoint: AuditCheckpoint
        do {
            checkpoint = try await signHeadCheckpoint(signer: signer, floor: floor, now: now, on: tx)
        } catch AuditIntegrityError.chainBroken(let verification) {
            report.brokenVerification = verification
            return report
        }
        report.checkpoint = checkpoint
        try await moveFloor(from: floor, verifiedThrough: checkpoint.seq, signer: signer, now: now, report: &report, on: tx)
        // Last: they lie beyond every checkpoint signed here, and appending locks the head.
        try await AuditLog().append(Self.checkpointEvent(checkpoint), at: now, on: tx)
        if let retention = report.retentionCheckpoint {
            try await AuditLog().append(Self.checkpointEvent(retention, reason: "retention"), at: now, on: tx)
        }
        return report
    }

    /// Retention: the cut is the last entry written before `now - retention` (at most the entry
    /// the head checkpoint just signed). Never deletes what was not verified: floor..cut is
    /// walked against the checkpoints in it, then signed at the cut, and the floor moves there.
    private func moveFloor(from floor: AuditChainVerifier.StartPoint, verifiedThrough headSeq: Int64, signer: CheckpointSigner,
                           now: Date, report: inout AuditMaintenanceReport, on tx: any Database) async throws {
        let cutoff = now.addingTimeInterval(-retention.seconds)
        guard let cut = try await retentionCut(before: cutoff, through: headSeq, on: tx), cut > floor.seq else { return }
        let checkpoints = try await trustedCheckpoints(above: floor.seq, through: cut, on: tx)
        let walk = Walk(start: floor, report: try await AuditChainVerifier().verify(from: floor, through: cut, checkpoints: checkpoints, on: tx))
        guard walk.report.isIntact else {
            // The verifier names the first bad entry, a short walk included ("entry N is missing").
            let verification = walk.verification(full: false, now: now)
            try await IntegrityStore.record(verification, on: tx)
            report.brokenVerification = verification
            return
        }
        let checkpoint = try signer.sign(seq: cut, hash: walk.report.lastHash, at: now)
        try await IntegrityStore.store(checkpoint, on: tx)
        try await IntegrityStore.moveFloor(to: .init(seq: cut, hash: walk.report.lastHash), on: tx)
        // Verification results age out with the entries they speak about.
        try await IntegrityStore.deleteVerifications(before: cutoff, on: tx)
        report.retentionCheckpoint = checkpoint
    }

    /// The highest seq written before `cutoff` (entries are appended in time order, give or take
    /// the milliseconds between taking the time and taking the head lock).
    private func retentionCut(before cutoff: Date, through headSeq: Int64, on db: any Database) async throws -> Int64? {
        struct Row: Decodable { let cut: Int64? }
        return try await sql(db).raw("""
            SELECT MAX(seq) AS cut FROM audit_log WHERE occurred_at < \(bind: cutoff) AND seq <= \(bind: headSeq)
            """).first(decoding: Row.self)?.cut
    }

    /// Deletes the entries up to `floorSeq`, oldest first, `deletionBatch` per statement (short
    /// statements, so appends and pages interleave); also what an interrupted earlier run left.
    /// What is below the floor was verified gap-free, so a batch deletes `upper - lowest + 1`.
    private func deleteEntries(through floorSeq: Int64, on db: any Database) async throws -> Int {
        struct Lowest: Decodable { let lowest: Int64? }
        guard var lowest = try await sql(db).raw("SELECT MIN(seq) AS lowest FROM audit_log").first(decoding: Lowest.self)?.lowest else {
            return 0
        }
        var deleted = 0
        while lowest <= floorSeq {
            let upper = min(floorSeq, lowest + deletionBatch - 1)
            try await sql(db).raw("DELETE FROM audit_log WHERE seq >= \(bind: lowest) AND seq <= \(bind: upper)").run()
            deleted += Int(upper - lowest + 1)
            lowest = upper + 1
        }
        return deleted
    }
}
