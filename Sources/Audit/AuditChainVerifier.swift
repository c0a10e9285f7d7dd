import FluentKit
import Foundation

/// Walks the audit table in sequence order and reports the first entry that does not fit the
/// chain: a changed field, a removed or inserted row, or a tail cut off after the head.
package struct AuditChainVerifier: Sendable {
    package struct Report: Sendable, Equatable {
        package let checkedEntries: Int
        package let firstBrokenSeq: Int64?
        package let problem: String?
        package var isIntact: Bool { firstBrokenSeq == nil && problem == nil }
    }

    package init() {}

    package func verify(on db: any Database, pageSize: Int = 1000) async throws -> Report {
        // The head is read first: entries appended while we walk the table are beyond it and
        // are left for the next run, so a live system gives no false alarm.
        guard let head = try await AuditHead.find(1, on: db) else {
            return Report(checkedEntries: 0, firstBrokenSeq: nil, problem: "the chain head is missing")
        }
        var expectedSeq: Int64 = 1
        var previousHash = AuditChain.genesisHash
        var checked = 0
        while true {
            let page = try await AuditEntry.query(on: db)
                .filter(\.$id >= expectedSeq)
                .filter(\.$id <= head.seq)
                .sort(\.$id)
                .limit(pageSize)
                .all()
            for entry in page {
                let seq = entry.id ?? -1
                if seq != expectedSeq {
                    return Report(checkedEntries: checked, firstBrokenSeq: expectedSeq, problem: "entry \(expectedSeq) is missing")
                }
                if entry.previousHash != previousHash {
                    return Report(checkedEntries: checked, firstBrokenSeq: seq, problem: "entry \(seq) does not link to entry \(seq - 1)")
                }
                if AuditChain.hash(of: entry, previous: previousHash) != entry.hash {
                    return Report(checkedEntries: checked, firstBrokenSeq: seq, problem: "entry \(seq) was changed after it was written")
                }
                previousHash = entry.hash
                expectedSeq += 1
                checked += 1
            }
            if page.count < pageSize { break }
        }
        if head.seq != expectedSeq - 1 || head.hash != previousHash {
            return Report(checkedEntries: checked, firstBrokenSeq: expectedSeq, problem: "entries after \(expectedSeq - 1) up to \(head.seq) are missing")
        }
        return Report(checkedEntries: checked, firstBrokenSeq: nil, problem: nil)
    }
}
