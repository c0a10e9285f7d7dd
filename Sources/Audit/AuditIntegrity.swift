import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage

/// Tamper evidence beyond the chain: verification from the last good signed checkpoint (or in
/// full), signing checkpoints, and the scheduled job that signs hourly and applies retention.
package struct AuditIntegrity: Sendable {
    package let signer: CheckpointSigner?
    package let checkpointInterval: Duration
    package let retention: Duration
    /// How often the periodic job checks the whole trail (``runScheduledFullCheck(now:on:)``).
    package let fullCheckInterval: Duration
    /// Keys whose checkpoints are trusted as start points: the signer's and any given.
    package let trustedKeys: [P256.Signing.PublicKey]
    /// Entries deleted per statement by retention (tests make it small).
    var deletionBatch: Int64 = 10_000

    package static let defaultCheckpointInterval: Duration = .seconds(3600)
    package static let defaultRetention: Duration = .seconds(400 * 86400)
    package static let defaultFullCheckInterval: Duration = .seconds(86400)

    /// `signer` nil: verification only (with `publicKeys`), no signing, no retention.
    package init(signer: CheckpointSigner?, checkpointInterval: Duration = defaultCheckpointInterval,
                 retention: Duration = defaultRetention, fullCheckInterval: Duration = defaultFullCheckInterval,
                 publicKeys: [P256.Signing.PublicKey] = []) {
        self.signer = signer
        self.checkpointInterval = checkpointInterval
        self.retention = retention
        self.fullCheckInterval = fullCheckInterval
        self.trustedKeys = (signer.map { [$0.publicKey] } ?? []) + publicKeys
    }

    package func isTrusted(_ checkpoint: AuditCheckpoint) -> Bool {
        trustedKeys.contains { checkpoint.isSigned(by: $0) }
    }

    // MARK: verification

    /// Verifies and records the result. Incremental: from the latest checkpoint with a good
    /// signature, after checking that its entry still has the signed hash. Full: from the
    /// retention floor (whose checkpoint must be good), checking every good checkpoint on the way.
    package func verify(full: Bool, now: Date, on db: any Database) async throws -> AuditVerification {
        try await verifyAndRecord(full: full, floor: IntegrityStore.floor(on: db), now: now, on: db).verification
    }

    /// The recorded verification and the last entry it found intact (what a checkpoint may sign).
    /// Beyond the walk: the checkpoint rows it reached are checked, and a check of new entries
    /// reports a failed full check until a later one passes (it cannot see below its start).
    func verifyAndRecord(full: Bool, floor: AuditChainVerifier.StartPoint, now: Date, on db: any Database) async throws -> (verification: AuditVerification, end: AuditChainVerifier.StartPoint) {
        let walk = try await walk(full: full, floor: floor, on: db)
        var verification = walk.verification(full: full, now: now)
        if verification.isIntact, let problem = try await checkpointProblem(
            recorded: walk.report.recordedCheckpoints, from: full ? floor.seq : walk.start.seq, on: db) {
            verification = verification.broken(at: problem.seq, problem.text)
        }
        if verification.isIntact, !full, let failed = try await IntegrityStore.lastVerification(full: true, on: db), !failed.isIntact {
            let time = AuditTime.iso8601(milliseconds: AuditChain.milliseconds(failed.verifiedAt))
            verification = verification.broken(
                at: failed.firstBrokenSeq ?? failed.toSeq,
                "the full check of \(time) found the trail broken at entry \(failed.firstBrokenSeq.map(String.init) ?? "?") "
                    + "(\(failed.problem ?? "unknown problem")); until a full check passes, no checkpoint is signed")
        }
        try await IntegrityStore.record(verification, on: db)
        return (verification, .init(seq: walk.report.lastSeq, hash: walk.report.lastHash))
    }

    /// The first problem with the checkpoint rows themselves, from `minSeq` on: one that names a
    /// checkpoint key but whose signature does not verify with it, or one an `audit.checkpoint`
    /// entry of the walk (`recorded`: entry seq → checkpoint seq) says was signed but that is not
    /// there (deleted). A row of a key this checker does not know is passed over, as before: an
    /// instance not yet restarted after `rotate-key` must not take the new key's rows for forgeries.
    func checkpointProblem(recorded: [Int64: Int64], from minSeq: Int64, on db: any Database) async throws -> (seq: Int64, text: String)? {
        let keyIDs = Set(trustedKeys.map(CheckpointSigner.keyID(of:)))
        var stored: [Int64: [AuditCheckpoint]] = [:]
        var below = Int64.max
        while true {
            let page = try await IntegrityStore.checkpoints(atOrBelow: below, atLeast: minSeq, limit: 1000, on: db)
            for checkpoint in page { stored[checkpoint.seq, default: []].append(checkpoint) }
            guard page.count == 1000, let last = page.last else { break }
            below = last.seq - 1
        }
        var problems: [(seq: Int64, text: String)] = []
        for (seq, checkpoints) in stored {
            for checkpoint in checkpoints where keyIDs.contains(checkpoint.keyID) && !isTrusted(checkpoint) {
                let time = AuditTime.iso8601(milliseconds: AuditChain.milliseconds(checkpoint.signedAt))
                problems.append((seq, "the checkpoint of entry \(seq) of \(time) (key \(checkpoint.keyID)) does not verify with its key"))
            }
        }
        for (entry, seq) in recorded {
            var checkpoints = stored[seq] ?? []
            if seq < minSeq {
                checkpoints = try await IntegrityStore.checkpoints(atOrBelow: seq, atLeast: seq, limit: 1, on: db)
            }
            if checkpoints.isEmpty {
                problems.append((entry, "entry \(entry) records a checkpoint of entry \(seq), which is missing from the checkpoints: deleted"))
            }
        }
        return problems.min { $0.seq < $1.seq }
    }

    package func lastVerification(on db: any Database) async throws -> AuditVerification? {
        try await IntegrityStore.lastVerification(on: db)
    }

    /// The checkpoint with the highest seq (the newest of those at that seq).
    package func latestCheckpoint(on db: any Database) async throws -> AuditCheckpoint? {
        try await IntegrityStore.checkpoints(atOrBelow: .max, atLeast: 0, limit: 1, on: db).first
    }

    struct Walk {
        let start: AuditChainVerifier.StartPoint
        let report: AuditChainVerifier.Report
        /// The walk began by checking the start point's own entry against a checkpoint.
        var checkedStart = false
        /// The checkpoint the walk started from (nil: the first entry kept).
        var fromCheckpoint: Int64?

        /// The walk as it is recorded: the one place a verification result is built.
        func verification(full: Bool, now: Date) -> AuditVerification {
            // A checkpoint's own entry is checked (its hash) before the walk after it.
            var verification = AuditVerification(
                verifiedAt: AuditChain.truncatedToMilliseconds(now), full: full,
                fromSeq: checkedStart ? start.seq : start.seq + 1, toSeq: report.firstBrokenSeq ?? report.lastSeq,
                checkedEntries: report.checkedEntries + (checkedStart && report.isIntact ? 1 : 0),
                firstBrokenSeq: report.firstBrokenSeq, problem: report.problem)
            verification.fromCheckpoint = fromCheckpoint
            return verification
        }
    }

    /// Walks from the retention floor (`full`) or from the latest trusted checkpoint above it.
    func walk(full: Bool, floor: AuditChainVerifier.StartPoint, on db: any Database) async throws -> Walk {
        if floor.seq > 0, try await !hasTrustedCheckpoint(at: floor, on: db) {
            return Walk(start: floor, report: .init(
                checkedEntries: 0, firstBrokenSeq: floor.seq,
                problem: "entries up to \(floor.seq) were deleted, but no checkpoint with a good signature vouches for entry \(floor.seq)"))
        }
        if full {
            // Checkpoints beyond the head too: they show a tail removed together with its head.
            let checkpoints = try await trustedCheckpoints(above: floor.seq, through: .max, on: db)
            let report = try await AuditChainVerifier().verify(from: floor, checkpoints: checkpoints, on: db)
            if report.isIntact, let beyond = checkpoints.values.filter({ $0.seq > report.lastSeq }).max(by: { $0.seq < $1.seq }) {
                let time = AuditTime.iso8601(milliseconds: AuditChain.milliseconds(beyond.signedAt))
                return Walk(start: floor, report: .init(
                    checkedEntries: report.checkedEntries, firstBrokenSeq: report.lastSeq + 1,
                    problem: "entries after \(report.lastSeq) are missing: the checkpoint of \(time) signed entry \(beyond.seq)",
                    lastSeq: report.lastSeq, lastHash: report.lastHash))
            }
            return Walk(start: floor, report: report)
        }
        guard let checkpoint = try await latestTrustedCheckpoint(atLeast: floor.seq, on: db) else {
            return Walk(start: floor, report: try await AuditChainVerifier().verify(from: floor, on: db))
        }
        // A rewritten tail is consistent in itself: only the signed hash at the checkpoint's
        // entry shows it. The earlier checkpoints say where the rewrite can start.
        let entry = try await AuditRow.find(checkpoint.seq, on: db)
        let start = AuditChainVerifier.StartPoint(seq: checkpoint.seq, hash: checkpoint.hash)
        if checkpoint.seq > 0, entry?.hash != checkpoint.hash {
            let previousGood = try await previousMatchingCheckpoint(below: checkpoint.seq, atLeast: floor.seq, on: db)
            return Walk(start: start, report: .init(
                checkedEntries: 0, firstBrokenSeq: checkpoint.seq,
                problem: AuditChainVerifier.rewritten(seq: checkpoint.seq, checkpoint: checkpoint, previousGood: previousGood)),
                fromCheckpoint: checkpoint.seq)
        }
        return Walk(start: start, report: try await AuditChainVerifier().verify(from: start, on: db), checkedStart: checkpoint.seq > 0,
                    fromCheckpoint: checkpoint.seq)
    }

    private func hasTrustedCheckpoint(at point: AuditChainVerifier.StartPoint, on db: any Database) async throws -> Bool {
        try await IntegrityStore.checkpoints(atOrBelow: point.seq, atLeast: point.seq, limit: 100, on: db)
            .contains { $0.hash == point.hash && isTrusted($0) }
    }

    private func latestTrustedCheckpoint(atLeast minSeq: Int64, on db: any Database) async throws -> AuditCheckpoint? {
        var below = Int64.max
        while true {
            let page = try await IntegrityStore.checkpoints(atOrBelow: below, atLeast: minSeq, limit: 50, on: db)
            if let good = page.first(where: isTrusted) { return good }
            guard page.count == 50, let last = page.last else { return nil }
            // Untrusted checkpoints (another key, a bad signature) are passed over, like unknown
            // signers of a signed note.
            below = last.seq - 1
        }
    }

    /// The seq of the newest trusted checkpoint below `seq` whose entry still has its hash (0: none).
    private func previousMatchingCheckpoint(below seq: Int64, atLeast minSeq: Int64, on db: any Database) async throws -> Int64 {
        var below = seq - 1
        while below >= minSeq {
            let page = try await IntegrityStore.checkpoints(atOrBelow: below, atLeast: minSeq, limit: 50, on: db)
            for checkpoint in page where isTrusted(checkpoint) {
                if checkpoint.seq == 0 { return 0 }
                if try await AuditRow.find(checkpoint.seq, on: db)?.hash == checkpoint.hash { return checkpoint.seq }
            }
            guard page.count == 50, let last = page.last else { break }
            below = last.seq - 1
        }
        return 0
    }

    /// Trusted checkpoints in (minSeq, maxSeq] by seq, for the full walk (hourly for 400 days is
    /// about 10,000: small enough to hold).
    func trustedCheckpoints(above minSeq: Int64, through maxSeq: Int64, on db: any Database) async throws -> [Int64: AuditCheckpoint] {
        var result: [Int64: AuditCheckpoint] = [:]
        var below = maxSeq
        while below > minSeq {
            let page = try await IntegrityStore.checkpoints(atOrBelow: below, atLeast: minSeq + 1, limit: 1000, on: db)
            for checkpoint in page where result[checkpoint.seq] == nil && isTrusted(checkpoint) {
                result[checkpoint.seq] = checkpoint
            }
            guard page.count == 1000, let last = page.last else { break }
            below = last.seq - 1
        }
        return result
    }

    // MARK: signing

    /// Verifies incrementally and, only if the trail is intact, signs and stores a checkpoint of
    /// the last verified entry, then appends an "audit.checkpoint" entry. That entry lies beyond
    /// the checkpoint (signed first, appended after): the next checkpoint covers it.
    package func checkpointNow(now: Date, on db: any Database) async throws -> AuditCheckpoint {
        guard let signer else { throw AuditIntegrityError.noSigningKey }
        let checkpoint = try await signHeadCheckpoint(signer: signer, floor: IntegrityStore.floor(on: db), now: now, on: db)
        try await AuditLog().append(Self.checkpointEvent(checkpoint), at: now, on: db)
        return checkpoint
    }

    /// ``checkpointNow(now:on:)`` without the audit entry: the scheduled job appends its entries
    /// last, so the head stays unlocked (PostgreSQL) while it verifies. Throws
    /// ``AuditIntegrityError/chainBroken(_:)`` (after recording the verification) when broken.
    func signHeadCheckpoint(signer: CheckpointSigner, floor: AuditChainVerifier.StartPoint, now: Date, on db: any Database) async throws -> AuditCheckpoint {
        let (verification, end) = try await verifyAndRecord(full: false, floor: floor, now: now, on: db)
        guard verification.isIntact else { throw AuditIntegrityError.chainBroken(verification) }
        // The walk's end, not the head as it is now: only what was checked gets signed.
        let checkpoint = try signer.sign(seq: end.seq, hash: end.hash, at: now)
        try await IntegrityStore.store(checkpoint, on: db)
        return checkpoint
    }

    /// The "audit.checkpoint" entry for `checkpoint` (`reason`: why it was signed, if not the schedule or the CLI).
    static func checkpointEvent(_ checkpoint: AuditCheckpoint, reason: String? = nil) -> AuditEvent {
        var details = ["seq": "\(checkpoint.seq)"]
        details["reason"] = reason
        return AuditEvent(action: .auditCheckpoint, outcome: .success, details: details)
    }
}

package enum AuditIntegrityError: Error, CustomStringConvertible {
    case noSigningKey
    case floorMissing
    case chainBroken(AuditVerification)

    package var description: String {
        switch self {
        case .noSigningKey: "no checkpoint key: pass --audit-checkpoint-key (the key `portal serve` uses)"
        case .floorMissing: "audit_floor row is missing: run `portal migrate`"
        case .chainBroken(let verification): "not signing: \(verification.summary)"
        }
    }
}

extension AuditAction {
    /// A checkpoint was signed (details: seq).
    package static let auditCheckpoint: AuditAction = "audit.checkpoint"
    /// Entries older than the retention were deleted (details: cut seq, deleted count).
    package static let auditRetention: AuditAction = "audit.retention"
}
