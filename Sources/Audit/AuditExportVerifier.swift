import Crypto
import Foundation

/// Checks a JSON Lines export against a signed checkpoint, with no database: every line's hash,
/// seqs strictly ascending (oldest first, as the portal exports) and, unless `filtered`, without
/// gaps, so a deleted line is found; the link between lines with consecutive seqs (a filtered
/// export's gaps are not links); that a file starting at entry 1 starts from the genesis hash;
/// the checkpoint's signature; and that the checkpoint's entry carries the signed hash (when the
/// file has it, or starts just after it: then the first line must link to the signed hash).
package struct AuditExportVerifier: Sendable {
    package struct Report: Sendable, Equatable {
        package var linesChecked = 0
        /// The checkpoint's entry was in the file and had the signed hash, or the file starts
        /// just after it and its first line links to the signed hash.
        package var checkpointEntryFound = false
        package var firstBrokenSeq: Int64?
        /// 1-based line of the first problem.
        package var line: Int?
        package var problem: String?
        package var isIntact: Bool { problem == nil }
    }

    package let checkpoint: AuditCheckpoint
    package let publicKey: P256.Signing.PublicKey
    /// The export of a search filter: seqs may skip (still strictly ascending, no line twice).
    package let filtered: Bool

    package init(checkpoint: AuditCheckpoint, publicKey: P256.Signing.PublicKey, filtered: Bool = false) {
        self.checkpoint = checkpoint
        self.publicKey = publicKey
        self.filtered = filtered
    }

    /// Reads `path` in blocks, so a file of millions of lines needs little memory.
    package func verify(fileAt path: String) throws -> Report {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AuditExportRecord.DecodeError(description: "cannot read \(path)")
        }
        defer { try? handle.close() }
        var state = State(verifier: self)
        if let problem = state.checkSignature() { return problem }
        var pending: [UInt8] = []
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
            pending.append(contentsOf: block)
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                if let broken = state.check(line: pending[start..<newline]) { return broken }
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty, let broken = state.check(line: pending[...]) { return broken }
        return state.finish()
    }

    /// The same over lines in memory (tests, small files).
    package func verify(lines: [String]) -> Report {
        var state = State(verifier: self)
        if let problem = state.checkSignature() { return problem }
        for line in lines {
            if let broken = state.check(line: Array(line.utf8)[...]) { return broken }
        }
        return state.finish()
    }

    private struct State {
        let verifier: AuditExportVerifier
        var report = Report()
        var previous: AuditExportRecord?
        var lineNumber = 0

        func checkSignature() -> Report? {
            guard verifier.checkpoint.isSigned(by: verifier.publicKey) else {
                var report = Report()
                report.problem = verifier.checkpoint.keyID == CheckpointSigner.keyID(of: verifier.publicKey)
                    ? "the checkpoint's signature is not valid"
                    : "the checkpoint was signed by key \(verifier.checkpoint.keyID), not by the given public key (\(CheckpointSigner.keyID(of: verifier.publicKey)))"
                return report
            }
            return nil
        }

        mutating func check(line: ArraySlice<UInt8>) -> Report? {
            lineNumber += 1
            if line.isEmpty || line == [0x0D] { return nil }
            let record: AuditExportRecord
            do {
                record = try AuditExportRecord.decode(line: line)
            } catch {
                return broken(nil, "line \(lineNumber): \(error)")
            }
            if record.recomputedHash != record.hash {
                return broken(record.seq, "entry \(record.seq) (line \(lineNumber)) was changed after it was written")
            }
            if let previous {
                if record.seq == previous.seq {
                    return broken(record.seq, "entry \(record.seq) appears twice (line \(lineNumber))")
                }
                if record.seq < previous.seq {
                    return broken(record.seq, "entry \(record.seq) (line \(lineNumber)) follows entry \(previous.seq): seqs must ascend")
                }
                if record.seq != previous.seq + 1, !verifier.filtered {
                    return broken(previous.seq + 1, "entry \(previous.seq + 1) is missing (line \(lineNumber) has entry \(record.seq)); pass --filtered for the export of a search")
                }
                if record.seq == previous.seq + 1, record.previousHash != previous.hash {
                    return broken(record.seq, "entry \(record.seq) (line \(lineNumber)) does not link to entry \(previous.seq)")
                }
            } else {
                if record.seq == 1, record.previousHash != AuditChain.genesisHash {
                    return broken(1, "entry 1 (line \(lineNumber)) does not start from the genesis hash")
                }
                if record.seq == verifier.checkpoint.seq + 1 {
                    guard record.previousHash == verifier.checkpoint.hash else {
                        return broken(record.seq, "entry \(record.seq) (line \(lineNumber)) does not link to the hash the checkpoint signed for entry \(verifier.checkpoint.seq)")
                    }
                    report.checkpointEntryFound = true
                }
            }
            if record.seq == verifier.checkpoint.seq {
                guard record.hash == verifier.checkpoint.hash else {
                    return broken(record.seq, "entry \(record.seq) (line \(lineNumber)) does not have the hash signed in the checkpoint")
                }
                report.checkpointEntryFound = true
            }
            report.linesChecked += 1
            previous = record
            return nil
        }

        func broken(_ seq: Int64?, _ problem: String) -> Report {
            var result = report
            result.firstBrokenSeq = seq
            result.line = lineNumber
            result.problem = problem
            return result
        }

        func finish() -> Report { report }
    }
}
