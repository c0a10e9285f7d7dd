import FluentKit
import Foundation
import SQLKit
import Storage

/// Walks the audit table in sequence order and reports the first entry that does not fit the
/// chain: a changed field, a removed or inserted row, a tail cut off after the head, or (with
/// checkpoints) a rewritten stretch whose hashes no longer match what was signed.
package struct AuditChainVerifier: Sendable {
    package struct Report: Sendable, Equatable {
        package let checkedEntries: Int
        package let firstBrokenSeq: Int64?
        package let problem: String?
        /// The last entry that checked out (the start point when none did): a checkpoint signs it.
        package var lastSeq: Int64 = 0
        package var lastHash: String = AuditChain.genesisHash
        /// The `audit.checkpoint` entries walked: entry seq → the seq of the checkpoint it records.
        package var recordedCheckpoints: [Int64: Int64] = [:]
        package var isIntact: Bool { firstBrokenSeq == nil && problem == nil }
    }

    /// Where a walk starts: after entry `seq`, whose hash is `hash` (seq 0: the genesis hash).
    package struct StartPoint: Sendable, Equatable {
        package let seq: Int64
        package let hash: String
        package init(seq: Int64, hash: String) {
            self.seq = seq
            self.hash = hash
        }
        package static let genesis = StartPoint(seq: 0, hash: AuditChain.genesisHash)
    }

    package init() {}

    /// The whole chain, from the first entry to the head.
    package func verify(on db: any Database, pageSize: Int = 1000) async throws -> Report {
        try await verify(from: .genesis, on: db, pageSize: pageSize)
    }

    /// Entries after `start` up to `end` (default: the head, whose seq and hash must then match
    /// the last entry), comparing each entry with a signed hash in `checkpoints` (seq → checkpoint).
    package func verify(from start: StartPoint, through end: Int64? = nil, checkpoints: [Int64: AuditCheckpoint] = [:],
                        on db: any Database, pageSize: Int = 1000) async throws -> Report {
        // The head is read first: entries appended while we walk the table are beyond it and
        // are left for the next run, so a live system gives no false alarm.
        guard let head = try await AuditHead.find(1, on: db) else {
            return Report(checkedEntries: 0, firstBrokenSeq: nil, problem: "the chain head is missing")
        }
        let last = end ?? head.seq
        var expectedSeq = start.seq + 1
        var previousHash = start.hash
        var lastMatchingCheckpoint = start.seq
        var checked = 0
        var recorded: [Int64: Int64] = [:]
        func broken(_ seq: Int64, _ problem: String) -> Report {
            Report(checkedEntries: checked, firstBrokenSeq: seq, problem: problem, lastSeq: expectedSeq - 1, lastHash: previousHash)
        }
        while expectedSeq <= last {
            let page = try await AuditRow.page(after: expectedSeq - 1, through: last, limit: pageSize, on: db)
            for row in page {
                let seq = row.seq
                if seq != expectedSeq {
                    return broken(expectedSeq, "entry \(expectedSeq) is missing")
                }
                if row.prev_hash != previousHash {
                    return broken(seq, "entry \(seq) does not link to entry \(seq - 1)")
                }
                if row.exportRecord.recomputedHash != row.hash {
                    return broken(seq, "entry \(seq) was changed after it was written")
                }
                if let checkpoint = checkpoints[seq] {
                    guard checkpoint.hash == row.hash else {
                        return broken(seq, Self.rewritten(seq: seq, checkpoint: checkpoint, previousGood: lastMatchingCheckpoint))
                    }
                    lastMatchingCheckpoint = seq
                }
                if row.action == AuditAction.auditCheckpoint.rawValue, let signed = row.detailValues["seq"].flatMap(Int64.init) {
                    recorded[seq] = signed
                }
                previousHash = row.hash
                expectedSeq += 1
                checked += 1
            }
            if page.count < pageSize { break }
        }
        if expectedSeq <= last {
            return broken(expectedSeq, end == nil
                ? "entries after \(expectedSeq - 1) up to \(head.seq) are missing"
                : "entry \(expectedSeq) is missing")
        }
        if end == nil, head.hash != previousHash {
            return broken(expectedSeq, "entries after \(expectedSeq - 1) up to \(head.seq) are missing")
        }
        return Report(checkedEntries: checked, firstBrokenSeq: nil, problem: nil, lastSeq: expectedSeq - 1, lastHash: previousHash,
                      recordedCheckpoints: recorded)
    }

    /// The problem text when entry `seq` lost the hash a checkpoint signed: the chain itself may
    /// be consistent (rewritten with new hashes), so all that is known is the stretch.
    static func rewritten(seq: Int64, checkpoint: AuditCheckpoint, previousGood: Int64) -> String {
        let time = AuditTime.iso8601(milliseconds: AuditChain.milliseconds(checkpoint.signedAt))
        let after = previousGood > 0 ? "after entry \(previousGood), the previous checkpoint that still matches" : "after the start of the trail"
        return "entry \(seq) no longer has the hash signed in the checkpoint of \(time): the trail was rewritten \(after)"
    }
}
