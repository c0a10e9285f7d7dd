import FluentKit
import Foundation
import SQLKit
import Storage

/// Compares a checkpoint handed out earlier (kept outside the database: the checkpoint timer's
/// file, a copy the key holder has) with the database, and tells a database restored from an
/// older backup apart from a rewritten trail.
///
/// The tell is time. Entry N existed before checkpoint N was signed, so its `occurred_at` is at or
/// before the checkpoint's time. After a restore from a backup older than the checkpoint, entry N
/// is either missing or was written again after the restore, that is after the checkpoint's
/// time. An entry N from before the checkpoint with another hash was rewritten.
package struct RestoreDetection: Sendable {
    package init() {}

    /// Entries a restore lost: `firstMissing...checkpointSeq` as the checkpoint vouched for them.
    package struct Gap: Sendable, Equatable {
        package let checkpointSeq: Int64
        package let firstMissing: Int64
        /// The seq of the `audit.restore_detected` entry that records the gap.
        package let recordedAt: Int64
        /// False when an earlier run had already recorded it.
        package let newlyRecorded: Bool

        package var lastMissing: Int64 { checkpointSeq }
        package var missingCount: Int64 { checkpointSeq - firstMissing + 1 }

        package var description: String {
            "restored from a backup older than checkpoint \(checkpointSeq): entries \(firstMissing)..\(lastMissing) "
                + "(\(missingCount) entries) are missing; recorded as audit entry \(recordedAt)"
        }
    }

    package enum Outcome: Sendable, Equatable {
        /// The checkpoint's entry is there with the hash it signed.
        case present
        /// The checkpoint's entry was deleted by retention: nothing left to compare.
        case belowRetention(floor: Int64)
        case restoredOlder(Gap)
        /// Entry `seq`, written before the checkpoint, has another hash.
        case rewritten(seq: Int64)

        package var description: String {
            switch self {
            case .present: "present"
            case .belowRetention(let floor): "entries up to \(floor) were deleted by retention"
            case .restoredOlder(let gap): gap.description
            case .rewritten(let seq):
                "entry \(seq) does not have the hash the checkpoint signed, and it was written before the checkpoint: the trail was rewritten"
            }
        }
    }

    /// Compares, and on a restore appends `audit.restore_detected` (seq numbers only) unless an
    /// earlier run did for this checkpoint. The checkpoint's signature is the caller's to check.
    package func check(_ checkpoint: AuditCheckpoint, now: Date, on db: any Database) async throws -> Outcome {
        let floor = try await IntegrityStore.floor(on: db)
        if checkpoint.seq < floor.seq { return .belowRetention(floor: floor.seq) }
        if checkpoint.seq == floor.seq {
            // Its entry is deleted; the floor keeps its hash.
            return floor.hash == checkpoint.hash ? .present : .rewritten(seq: checkpoint.seq)
        }
        let row = try await AuditRow.find(checkpoint.seq, on: db)
        if row?.hash == checkpoint.hash { return .present }
        if let row, row.occurred_at <= checkpoint.signedAt { return .rewritten(seq: checkpoint.seq) }
        var firstMissing = try await headSeq(on: db) + 1
        if let written = try await firstEntry(after: checkpoint.signedAt, on: db) { firstMissing = written }
        if let recorded = try await recordedDetection(of: checkpoint.seq, on: db) {
            return .restoredOlder(Gap(checkpointSeq: checkpoint.seq, firstMissing: firstMissing, recordedAt: recorded, newlyRecorded: false))
        }
        let details = [
            "checkpoint_seq": "\(checkpoint.seq)", "missing_from": "\(firstMissing)",
            "missing_to": "\(checkpoint.seq)", "missing_count": "\(checkpoint.seq - firstMissing + 1)",
        ]
        let seq = try await AuditLog().append(
            AuditEvent(action: .auditRestoreDetected, outcome: .failure, details: details), at: now, on: db)
        return .restoredOlder(Gap(checkpointSeq: checkpoint.seq, firstMissing: firstMissing, recordedAt: seq, newlyRecorded: true))
    }

    private func firstEntry(after time: Date, on db: any Database) async throws -> Int64? {
        struct Row: Decodable { let seq: Int64? }
        return try await sql(db).raw("SELECT MIN(seq) AS seq FROM audit_log WHERE occurred_at > \(bind: time)")
            .first(decoding: Row.self)?.seq
    }

    private func headSeq(on db: any Database) async throws -> Int64 {
        struct Row: Decodable { let seq: Int64 }
        guard let row = try await sql(db).raw("SELECT seq FROM audit_head WHERE id = 1").first(decoding: Row.self) else {
            throw AuditError.headMissing
        }
        return row.seq
    }

    /// The seq of an earlier `audit.restore_detected` entry for checkpoint `seq` (few ever exist).
    private func recordedDetection(of seq: Int64, on db: any Database) async throws -> Int64? {
        struct Row: Decodable { let seq: Int64; let details: String }
        let rows = try await sql(db).raw("""
            SELECT seq, details FROM audit_log WHERE action = \(bind: AuditAction.auditRestoreDetected.rawValue) ORDER BY seq
            """).all(decoding: Row.self)
        return rows.first { row in
            let details = try? JSONDecoder().decode([String: String].self, from: Data(row.details.utf8))
            return details?["checkpoint_seq"] == "\(seq)"
        }?.seq
    }
}

extension AuditAction {
    /// A checkpoint handed out earlier is newer than the database: it was restored from an older
    /// backup (details: checkpoint_seq, missing_from, missing_to, missing_count).
    package static let auditRestoreDetected: AuditAction = "audit.restore_detected"
}
