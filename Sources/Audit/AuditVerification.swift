import Foundation

/// The result of one verification of the audit trail, as recorded in `audit_verifications`.
package struct AuditVerification: Sendable, Equatable {
    package let verifiedAt: Date
    package let full: Bool
    /// The first and last entry the walk covered (`fromSeq` > `toSeq` when there was nothing new).
    package let fromSeq: Int64
    package let toSeq: Int64
    package let checkedEntries: Int
    package let firstBrokenSeq: Int64?
    package let problem: String?
    package var isIntact: Bool { firstBrokenSeq == nil && problem == nil }
    /// The signed checkpoint a check of new entries started from (nil: it started at the first
    /// entry kept). Not stored: only the run that just happened says it.
    package var fromCheckpoint: Int64?

    package init(verifiedAt: Date, full: Bool, fromSeq: Int64, toSeq: Int64, checkedEntries: Int, firstBrokenSeq: Int64?, problem: String?) {
        self.verifiedAt = verifiedAt
        self.full = full
        self.fromSeq = fromSeq
        self.toSeq = toSeq
        self.checkedEntries = checkedEntries
        self.firstBrokenSeq = firstBrokenSeq
        self.problem = problem
    }

    /// The same run, found broken at `seq` by a check beyond the walk (the checkpoint rows, an
    /// earlier full check).
    func broken(at seq: Int64, _ problem: String) -> AuditVerification {
        var verification = AuditVerification(
            verifiedAt: verifiedAt, full: full, fromSeq: fromSeq, toSeq: toSeq, checkedEntries: checkedEntries,
            firstBrokenSeq: seq, problem: problem)
        verification.fromCheckpoint = fromCheckpoint
        return verification
    }

    /// What `portal audit verify` prints (and the admin page may show).
    package var summary: String {
        if isIntact {
            return "audit trail intact: \(checkedEntries) entries checked (seq \(fromSeq)..\(toSeq))"
        }
        return "audit trail broken at entry \(firstBrokenSeq.map(String.init) ?? "?"): \(problem ?? "unknown problem")"
    }

    /// Which stretch the walk covered, for `portal audit verify`'s output: a check of new entries
    /// does not see a change below the checkpoint it starts from, which only a full check does.
    package var range: String {
        if full { return "checked in full, from the first entry kept" }
        guard let fromCheckpoint else { return "checked from the first entry kept (no checkpoint to start from)" }
        return "checked from checkpoint \(fromCheckpoint); entries before it are checked only by --full and the scheduled full check"
    }
}
