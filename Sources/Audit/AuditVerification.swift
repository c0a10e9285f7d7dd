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

    package init(verifiedAt: Date, full: Bool, fromSeq: Int64, toSeq: Int64, checkedEntries: Int, firstBrokenSeq: Int64?, problem: String?) {
        self.verifiedAt = verifiedAt
        self.full = full
        self.fromSeq = fromSeq
        self.toSeq = toSeq
        self.checkedEntries = checkedEntries
        self.firstBrokenSeq = firstBrokenSeq
        self.problem = problem
    }

    /// What `portal audit verify` prints (and the admin page may show).
    package var summary: String {
        if isIntact {
            return "audit trail intact: \(checkedEntries) entries checked (seq \(fromSeq)..\(toSeq))"
        }
        return "audit trail broken at entry \(firstBrokenSeq.map(String.init) ?? "?"): \(problem ?? "unknown problem")"
    }
}
