import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage
import TestSupport
import XCTest
@testable import Audit

/// The JSON Lines export record and the offline check of an export against a checkpoint.
final class AuditExportTests: XCTestCase {
    let migrations: [any Migration] = [CreateAuditLog(), AddCheckpointsAndRetention()]
    let awkward = [
        #"say "hi" \ back/slash"#, "line\nbreak\r\ttab", "=cmd|' /C calc'!A0", "Jürgen ñ 😀 中文", "sep\u{2028}par\u{2029}",
        "ctl \u{1}\u{8}\u{C}\u{1F}\u{7F}", "+1 @sum -2", "",
    ]

    private func appendAwkward(on db: any Database) async throws {
        for (index, text) in awkward.enumerated() {
            try await AuditLog().append(AuditEvent(
                action: AuditAction(rawValue: "test.\(index)"), outcome: .refused, actor: text, role: index % 2 == 0 ? nil : text,
                address: index % 3 == 0 ? nil : "2001:db8::\(index)", requestID: text, subject: index % 2 == 0 ? text : nil,
                details: ["typed": text, text: "v"]), at: Date(timeIntervalSince1970: 1_800_000_000.5 + Double(index)), on: db)
        }
    }

    func testEscapingMatchesJSONEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var every = ""
        for scalar in 0..<0x80 { every.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        // NUL only here: neither database stores it inside text (PostgreSQL refuses it).
        for text in awkward + [every, "nul \u{0}"] {
            var out: [UInt8] = []
            JSONText.appendString(text, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), String(decoding: try encoder.encode(text), as: UTF8.self), text.debugDescription)
        }
        var out: [UInt8] = []
        JSONText.appendString("\u{1}\u{1F}\u{2028}/", to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "\"\\u0001\\u001f\u{2028}/\"", "the rule written out")
    }

    func testRecordsRoundTripAndReHashToTheStoredHash() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await appendAwkward(on: db)
            let entries = try await AuditEntry.query(on: db).sort(\.$id).all()
            XCTAssertEqual(entries.count, awkward.count)
            for entry in entries {
                let record = AuditExportRecord(entry)
                let line = record.line
                XCTAssertTrue(line.hasSuffix("}\n"))
                XCTAssertEqual(line.filter { $0 == "\n" }.count, 1, "one line per entry")
                XCTAssertFalse(line.dropLast().unicodeScalars.contains { $0.value < 0x20 }, "no raw control characters")
                let decoded = try AuditExportRecord.decode(line: line)
                XCTAssertEqual(decoded, record)
                XCTAssertEqual(decoded.recomputedHash, entry.hash, "seq \(entry.id!)")
                XCTAssertEqual(decoded.recomputedHash, AuditChain.hash(of: entry, previous: entry.previousHash))
                // Any other JSON parser reads the same fields: key order and `time` as documented.
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                XCTAssertEqual(object["actor"] as? String, entry.actor)
                XCTAssertEqual(object["details"] as? String, entry.details)
                XCTAssertEqual(object["time"] as? String, AuditTime.iso8601(milliseconds: record.atMilliseconds))
                XCTAssertTrue(line.hasPrefix("{\"seq\":\(entry.id!),\"time\":\"2027-01-15T08:00:0"), line)
                XCTAssertTrue(line.contains(",\"prev_hash\":\"\(entry.previousHash)\",\"hash\":\"\(entry.hash)\"}"), line)
            }
            XCTAssertTrue(AuditExportRecord(entries[0]).line.contains("\"role\":null"))
            // NUL, which neither database keeps in text, is stored as U+FFFD and the chain holds.
            try await AuditLog().append(AuditEvent(action: .signIn, outcome: .failure, actor: "nul\u{0}user", details: ["typed": "\u{0}"]), on: db)
            let nul = try await AuditEntry.find(Int64(awkward.count + 1), on: db)
            XCTAssertEqual(nul?.actor, "nul\u{FFFD}user")
            let chain = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(chain.isIntact, "\(chain)")
            XCTAssertTrue(AuditExportRecord(entries[4]).line.contains("sep\u{2028}par"), "U+2028 raw, as the rule says")
            // A changed field no longer re-hashes to the stored hash.
            var changed = AuditExportRecord(entries[2])
            changed.actor = "=cmd|' /C calc'!A1"
            XCTAssertNotEqual(changed.recomputedHash, changed.hash)
        }
    }

    func testExportFileIsCheckedAgainstTheCheckpoint() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await appendAwkward(on: db)
            let signer = CheckpointSigner(privateKey: .init())
            let checkpoint = try await AuditIntegrity(signer: signer).checkpointNow(now: Date(), on: db)
            let lines = try await AuditEntry.query(on: db).sort(\.$id).all().map { AuditExportRecord($0).line }
            let verifier = AuditExportVerifier(checkpoint: checkpoint, publicKey: signer.publicKey)

            let report = verifier.verify(lines: lines)
            XCTAssertTrue(report.isIntact, "\(report)")
            XCTAssertTrue(report.checkpointEntryFound)
            XCTAssertEqual(report.linesChecked, awkward.count + 1)
            let filtered = AuditExportVerifier(checkpoint: checkpoint, publicKey: signer.publicKey, filtered: true)
            XCTAssertTrue(filtered.verify(lines: lines).isIntact, "--filtered accepts a whole export too")
            XCTAssertTrue(filtered.verify(lines: lines.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)).isIntact,
                          "a filtered export has gaps, which are not broken links")

            // From a file, as the CLI reads it.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(lines.joined().utf8).write(to: file)
            XCTAssertEqual(try verifier.verify(fileAt: file.path), report)

            // One changed character in one line.
            var changed = lines
            changed[3] = changed[3].replacingOccurrences(of: "\"outcome\":\"refused\"", with: "\"outcome\":\"success\"")
            XCTAssertNotEqual(changed[3], lines[3])
            let broken = verifier.verify(lines: changed)
            XCTAssertEqual(broken.firstBrokenSeq, 4)
            XCTAssertEqual(broken.line, 4)
            XCTAssertEqual(broken.problem, "entry 4 (line 4) was changed after it was written")
            try Data(changed.joined().utf8).write(to: file)
            XCTAssertEqual(try verifier.verify(fileAt: file.path).firstBrokenSeq, 4)

            // A rewritten line with a fresh, self-consistent hash breaks the next link.
            var relinked = try AuditExportRecord.decode(line: lines[3])
            relinked.actor = "mallory"
            relinked.hash = relinked.recomputedHash
            var rewritten = lines
            rewritten[3] = relinked.line
            XCTAssertEqual(verifier.verify(lines: rewritten).problem, "entry 5 (line 5) does not link to entry 4")
            // The checkpoint's own entry rewritten, the export cut after it: only the signed hash shows it.
            let index = Int(checkpoint.seq) - 1
            var signed = try AuditExportRecord.decode(line: lines[index])
            XCTAssertEqual(signed.seq, checkpoint.seq)
            signed.actor = "mallory"
            signed.hash = signed.recomputedHash
            let atCheckpoint = verifier.verify(lines: lines[..<index] + [signed.line])
            XCTAssertEqual(atCheckpoint.firstBrokenSeq, checkpoint.seq)
            XCTAssertEqual(atCheckpoint.problem, "entry \(checkpoint.seq) (line \(index + 1)) does not have the hash signed in the checkpoint")

            // The checkpoint itself: another key, or a changed checkpoint.
            let other = AuditExportVerifier(checkpoint: checkpoint, publicKey: P256.Signing.PrivateKey().publicKey)
            XCTAssertFalse(other.verify(lines: lines).isIntact)
            let moved = try AuditCheckpoint.parse(checkpoint.text.replacingOccurrences(of: "seq \(checkpoint.seq)\n", with: "seq 3\n"))
            XCTAssertEqual(AuditExportVerifier(checkpoint: moved, publicKey: signer.publicKey).verify(lines: lines).problem,
                           "the checkpoint's signature is not valid")
        }
    }

    /// An export is oldest first and, unless it is a search's (`filtered`), without gaps: a
    /// deleted line, a line twice and lines out of order are each found and named.
    func testExportLinesMustBeContiguousAndAscending() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await appendAwkward(on: db)
            let signer = CheckpointSigner(privateKey: .init())
            let checkpoint = try await AuditIntegrity(signer: signer).checkpointNow(now: Date(), on: db)
            let lines = try await AuditEntry.query(on: db).sort(\.$id).all().map { AuditExportRecord($0).line }
            XCTAssertGreaterThan(lines.count, 6)
            let whole = AuditExportVerifier(checkpoint: checkpoint, publicKey: signer.publicKey)
            let filtered = AuditExportVerifier(checkpoint: checkpoint, publicKey: signer.publicKey, filtered: true)
            XCTAssertTrue(whole.verify(lines: lines).isIntact)

            // A deleted line (entry 4): every remaining line is intact in itself.
            var deleted = lines
            deleted.remove(at: 3)
            let missing = whole.verify(lines: deleted)
            XCTAssertEqual(missing.firstBrokenSeq, 4, "\(missing)")
            XCTAssertEqual(missing.line, 4)
            XCTAssertEqual(missing.problem?.hasPrefix("entry 4 is missing (line 4 has entry 5)"), true, missing.problem ?? "")
            XCTAssertTrue(filtered.verify(lines: deleted).isIntact, "a search's export may skip entries")
            // The last line deleted is not a gap: only a checkpoint beyond the file could show it.
            XCTAssertTrue(whole.verify(lines: Array(lines.dropLast())).isIntact)

            // A line twice, with or without --filtered.
            var twice = lines
            twice.insert(lines[2], at: 3)
            for verifier in [whole, filtered] {
                let report = verifier.verify(lines: twice)
                XCTAssertEqual(report.firstBrokenSeq, 3, "\(report)")
                XCTAssertEqual(report.problem, "entry 3 appears twice (line 4)")
            }

            // Lines out of order: swapped neighbours, a line moved back, newest first.
            var swapped = lines
            swapped.swapAt(2, 3)
            XCTAssertEqual(whole.verify(lines: swapped).firstBrokenSeq, 3, "entry 3 is missing where entry 4 stands")
            let swappedFiltered = filtered.verify(lines: swapped)
            XCTAssertEqual(swappedFiltered.firstBrokenSeq, 3, "\(swappedFiltered)")
            XCTAssertEqual(swappedFiltered.problem, "entry 3 (line 4) follows entry 4: seqs must ascend")
            var movedBack = lines
            movedBack.append(movedBack.remove(at: 1))
            XCTAssertEqual(filtered.verify(lines: movedBack).firstBrokenSeq, Int64(2))
            XCTAssertEqual(filtered.verify(lines: lines.reversed()).problem,
                           "entry \(lines.count - 1) (line 2) follows entry \(lines.count): seqs must ascend")

            // From a file, as the CLI reads it.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(deleted.joined().utf8).write(to: file)
            XCTAssertEqual(try whole.verify(fileAt: file.path).firstBrokenSeq, 4)
            XCTAssertTrue(try filtered.verify(fileAt: file.path).isIntact)

            // A file starting at entry 1 starts from the genesis hash; one starting just after the
            // checkpoint links to the signed hash.
            var first = try AuditExportRecord.decode(line: lines[0])
            first.previousHash = String(repeating: "e", count: 64)
            first.hash = first.recomputedHash
            XCTAssertEqual(whole.verify(lines: [first.line]).problem, "entry 1 (line 1) does not start from the genesis hash")
            let early = try signer.sign(seq: 3, hash: AuditExportRecord.decode(line: lines[2]).hash, at: Date())
            let afterEarly = AuditExportVerifier(checkpoint: early, publicKey: signer.publicKey)
            let tail = afterEarly.verify(lines: Array(lines[3...]))
            XCTAssertTrue(tail.isIntact && tail.checkpointEntryFound, "\(tail)")
            var relinked = try AuditExportRecord.decode(line: lines[3])
            relinked.previousHash = String(repeating: "e", count: 64)
            relinked.hash = relinked.recomputedHash
            XCTAssertEqual(afterEarly.verify(lines: [relinked.line] + Array(lines[4...])).firstBrokenSeq, 4)
        }
    }
}
