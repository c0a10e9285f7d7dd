import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage
import TestSupport
import XCTest
@testable import Audit

/// Signed checkpoints, incremental and full verification, retention: on SQLite and (when
/// configured) PostgreSQL.
final class AuditIntegrityTests: XCTestCase {
    let migrations: [any Migration] = [CreateAuditLog(), AddCheckpointsAndRetention()]
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func withDatabase(_ body: (any Database) async throws -> Void) async throws {
        try await TestDatabases.forEachMigrated(migrations, body)
    }

    private func append(_ count: Int, at time: Date? = nil, on db: any Database) async throws {
        for index in 0..<count {
            try await AuditLog().append(AuditEvent(action: .signIn, outcome: .success, actor: "user\(index)", details: ["n": "\(index)"]),
                                        at: time ?? start, on: db)
        }
    }

    private func integrity(_ signer: CheckpointSigner = CheckpointSigner(privateKey: .init()), retention: Duration = .seconds(400 * 86400)) -> AuditIntegrity {
        AuditIntegrity(signer: signer, checkpointInterval: .seconds(3600), retention: retention)
    }

    /// Disables the append-only triggers, as someone with direct database access would.
    private func dropAppendOnlyTriggers(_ db: any Database) async throws {
        if isPostgreSQL(db) {
            try await sql(db).raw("DROP TRIGGER audit_log_no_change ON audit_log").run()
        } else {
            try await sql(db).raw("DROP TRIGGER audit_log_no_update").run()
            try await sql(db).raw("DROP TRIGGER audit_log_no_delete").run()
        }
    }

    /// Recomputes the chain from `seq` on after changing entry `seq`'s actor, head included: a
    /// tail rewritten by someone who knows the rule.
    private func rewriteTail(from seq: Int64, on db: any Database) async throws {
        try await sql(db).raw("UPDATE audit_log SET actor = 'mallory' WHERE seq = \(bind: seq)").run()
        let entries = try await AuditEntry.query(on: db).filter(\.$id >= seq).sort(\.$id).all()
        var previous = try await AuditEntry.find(seq - 1, on: db)?.hash ?? AuditChain.genesisHash
        for entry in entries {
            let hash = AuditChain.hash(of: entry, previous: previous)
            try await sql(db).raw("UPDATE audit_log SET prev_hash = \(bind: previous), hash = \(bind: hash) WHERE seq = \(bind: entry.id!)").run()
            previous = hash
        }
        try await sql(db).raw("UPDATE audit_head SET hash = \(bind: previous) WHERE id = 1").run()
        let plain = try await AuditChainVerifier().verify(on: db)
        XCTAssertTrue(plain.isIntact, "the rewritten chain is consistent in itself: \(plain)")
    }

    /// Puts back the append-only triggers of migrations 001 and 002 as they were, so the database
    /// looks untouched afterwards.
    private func restoreAppendOnlyTriggers(_ db: any Database) async throws {
        if isPostgreSQL(db) {
            try await sql(db).raw("""
                CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
                FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()
                """).run()
        } else {
            try await sql(db).raw("""
                CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END
                """).run()
            try await sql(db).raw("""
                CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
                WHEN OLD.seq > (SELECT seq FROM audit_floor WHERE id = 1)
                BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END
                """).run()
        }
    }

    /// Issue 28, item 1, the outside tester's sequence: below the newest checkpoint, entry 100
    /// changed, 200 deleted, 300 and 301 swapped, no hash recomputed, the triggers dropped and
    /// put back.
    private func tamperBelowTheCheckpoint(_ db: any Database) async throws {
        try await dropAppendOnlyTriggers(db)
        try await sql(db).raw("UPDATE audit_log SET actor = 'mallory' WHERE seq = 100").run()
        try await sql(db).raw("DELETE FROM audit_log WHERE seq = 200").run()
        try await sql(db).raw("UPDATE audit_log SET seq = -301 WHERE seq = 301").run()
        try await sql(db).raw("UPDATE audit_log SET seq = 301 WHERE seq = 300").run()
        try await sql(db).raw("UPDATE audit_log SET seq = 300 WHERE seq = -301").run()
        try await restoreAppendOnlyTriggers(db)
        for statement in ["DELETE FROM audit_log WHERE seq = 5", "UPDATE audit_log SET actor = 'x' WHERE seq = 5"] {
            do {
                try await sql(db).raw(SQLQueryString(statement)).run()
                XCTFail("the triggers are back: \(statement) must be refused")
            } catch {
                XCTAssertTrue(String(reflecting: error).contains("append-only"), String(reflecting: error))
            }
        }
    }

    /// Issue 28, item 1: once a full check has seen the tampering below the newest checkpoint,
    /// the routine paths say so instead of "intact": a check of new entries (`portal audit
    /// verify`, Check new entries), the periodic job and `audit checkpoint --sign`, which sign
    /// nothing over it, until a later full check passes.
    func testTamperingBelowTheNewestCheckpointIsReportedByEveryRoutinePath() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(320, on: db)
            let checkpoint = try await integrity.checkpointNow(now: start, on: db)  // at 320
            try await append(3, on: db)
            try await tamperBelowTheCheckpoint(db)

            // Before a full check, a check of new entries cannot see below its checkpoint, and says so.
            let unseeing = try await integrity.verify(full: false, now: start.addingTimeInterval(30), on: db)
            XCTAssertTrue(unseeing.isIntact, unseeing.summary)
            XCTAssertEqual(unseeing.range, "checked from checkpoint 320; entries before it are checked only by --full and the scheduled full check")

            let scheduled = try await integrity.runScheduledFullCheck(now: start.addingTimeInterval(60), on: db)
            let full = try XCTUnwrap(scheduled, "no full check yet: due")
            XCTAssertTrue(full.full)
            XCTAssertEqual(full.firstBrokenSeq, 100, full.summary)
            XCTAssertEqual(full.problem, "entry 100 was changed after it was written")

            let incremental = try await integrity.verify(full: false, now: start.addingTimeInterval(120), on: db)
            XCTAssertFalse(incremental.isIntact, "a check of new entries must not say intact after a failed full check: \(incremental.summary)")
            XCTAssertEqual(incremental.firstBrokenSeq, 100, incremental.summary)
            XCTAssertTrue(incremental.problem?.contains("full check") ?? false, incremental.summary)
            let recorded = try await integrity.lastVerification(on: db)
            XCTAssertEqual(recorded?.firstBrokenSeq, 100, "recorded as broken, so the page and the metric show it")

            let job = try await integrity.runScheduled(now: start.addingTimeInterval(3600), on: db)
            XCTAssertNil(job.checkpoint, "the periodic job signs nothing over the broken history")
            XCTAssertEqual(job.brokenVerification?.firstBrokenSeq, 100)
            do {
                let signed = try await integrity.checkpointNow(now: start.addingTimeInterval(3660), on: db)
                XCTFail("audit checkpoint --sign must refuse, signed \(signed.seq)")
            } catch AuditIntegrityError.chainBroken(let verification) {
                XCTAssertEqual(verification.firstBrokenSeq, 100)
                XCTAssertTrue("\(AuditIntegrityError.chainBroken(verification))".contains("full check"), verification.summary)
            }
            let latest = try await integrity.latestCheckpoint(on: db)
            XCTAssertEqual(latest, checkpoint, "still the checkpoint from before the tampering")
        }
    }

    /// Issue 28, item 1: the scheduled full check runs once per interval, on one instance of
    /// several, and a full check asked for (Check everything, `verify --full`) counts as one.
    func testTheScheduledFullCheckRunsOncePerIntervalOnOneInstance() async throws {
        try await withDatabase { db in
            let integrity = AuditIntegrity(signer: CheckpointSigner(privateKey: .init()), fullCheckInterval: .seconds(86400))
            try await append(3, on: db)
            let now = start
            let runs = try await withThrowingTaskGroup(of: AuditVerification?.self) { group in
                for _ in 0..<4 { group.addTask { try await integrity.runScheduledFullCheck(now: now, on: db) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(runs.compactMap { $0 }.count, 1, "one instance walks")
            XCTAssertEqual(runs.compactMap { $0 }.first?.isIntact, true)
            let early = try await integrity.runScheduledFullCheck(now: start.addingTimeInterval(86399), on: db)
            XCTAssertNil(early, "not due within the interval")
            let asked = try await integrity.verify(full: true, now: start.addingTimeInterval(86000), on: db)
            XCTAssertTrue(asked.isIntact)
            let stillEarly = try await integrity.runScheduledFullCheck(now: start.addingTimeInterval(86401), on: db)
            XCTAssertNil(stillEarly, "the full check asked for counts")
            let due = try await integrity.runScheduledFullCheck(now: start.addingTimeInterval(86000 + 86400), on: db)
            XCTAssertEqual(due?.full, true)
            let shown = try await integrity.lastFullVerification(on: db)
            XCTAssertEqual(shown?.verifiedAt, due?.verifiedAt)
        }
    }

    /// Issue 28, item 1: the checkpoint rows are checked. The newest one deleted (the trail's own
    /// `audit.checkpoint` entry says it existed), or its signature broken, is reported by a check
    /// of new entries and by a full check, and nothing is signed over it.
    func testADeletedOrForgedCheckpointRowIsReported() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(5, on: db)
            _ = try await integrity.checkpointNow(now: start, on: db)  // at 5; 6 is audit.checkpoint
            try await append(3, on: db)  // 7...9
            let newest = try await integrity.checkpointNow(now: start.addingTimeInterval(3600), on: db)  // at 9; 10 audit.checkpoint
            XCTAssertEqual(newest.seq, 9)
            try await append(2, on: db)

            try await sql(db).raw("DELETE FROM audit_checkpoints WHERE seq = 9").run()
            for full in [false, true] {
                let result = try await integrity.verify(full: full, now: start.addingTimeInterval(3700), on: db)
                XCTAssertEqual(result.firstBrokenSeq, 10, "full: \(full): \(result.summary)")
                XCTAssertEqual(result.problem, "entry 10 records a checkpoint of entry 9, which is missing from the checkpoints: deleted")
            }
            let refused = try await integrity.runScheduled(now: start.addingTimeInterval(7200), on: db)
            XCTAssertNil(refused.checkpoint)
            XCTAssertEqual(refused.brokenVerification?.firstBrokenSeq, 10)

            // Put back with another signature: a forged row.
            let other = try CheckpointSigner(privateKey: .init()).sign(seq: 9, hash: newest.hash, at: newest.signedAt)
            try await sql(db).raw("""
                INSERT INTO audit_checkpoints (seq, hash, signed_at, key_id, signature)
                VALUES (9, \(bind: newest.hash), \(bind: newest.signedAt), \(bind: newest.keyID), \(bind: other.signature.base64EncodedString()))
                """).run()
            for full in [false, true] {
                let result = try await integrity.verify(full: full, now: start.addingTimeInterval(7300), on: db)
                XCTAssertEqual(result.firstBrokenSeq, 9, "full: \(full): \(result.summary)")
                XCTAssertTrue(result.problem?.contains("does not verify with its key") ?? false, result.summary)
            }
            do {
                _ = try await integrity.checkpointNow(now: start.addingTimeInterval(7400), on: db)
                XCTFail("nothing is signed over a checkpoint whose signature does not verify")
            } catch AuditIntegrityError.chainBroken(let verification) {
                XCTAssertEqual(verification.firstBrokenSeq, 9)
            }
        }
    }

    func testCheckpointIsSignedAndVerifiesWithThePublicKeyOnly() async throws {
        try await withDatabase { db in
            try await append(3, on: db)
            let signer = CheckpointSigner(privateKey: .init())
            let checkpoint = try await integrity(signer).checkpointNow(now: start, on: db)
            XCTAssertEqual(checkpoint.seq, 3)
            let third = try await AuditEntry.find(3, on: db)
            XCTAssertEqual(checkpoint.hash, third?.hash)
            XCTAssertTrue(checkpoint.isSigned(by: signer.publicKey))
            XCTAssertFalse(checkpoint.isSigned(by: P256.Signing.PrivateKey().publicKey), "another key")

            let parsed = try AuditCheckpoint.parse(checkpoint.text)
            XCTAssertEqual(parsed, checkpoint)
            XCTAssertTrue(parsed.isSigned(by: signer.publicKey))
            let forged = try AuditCheckpoint.parse(checkpoint.text.replacingOccurrences(of: "seq 3\n", with: "seq 2\n"))
            XCTAssertFalse(forged.isSigned(by: signer.publicKey), "a changed body")

            let stored = try await integrity(signer).latestCheckpoint(on: db)
            XCTAssertEqual(stored, checkpoint)
            let entry = try await AuditEntry.find(4, on: db)
            XCTAssertEqual(entry?.action, "audit.checkpoint", "signed first, audited after")
            XCTAssertEqual(entry?.detailValues, ["seq": "3"])
        }
    }

    func testCheckpointTextFormat() throws {
        let signer = CheckpointSigner(privateKey: .init())
        let checkpoint = try signer.sign(seq: 0, hash: AuditChain.genesisHash, at: Date(timeIntervalSince1970: 1_795_946_400.123))
        let lines = checkpoint.text.components(separatedBy: "\n")
        XCTAssertEqual(Array(lines[0..<6]), [
            "teletan-portal audit checkpoint", "seq 0", "hash " + String(repeating: "0", count: 64),
            "time 2026-11-29T10:00:00.123Z", "key \(signer.keyID)", "",
        ])
        XCTAssertTrue(lines[6].hasPrefix("signature "))
        XCTAssertEqual(lines.count, 8)
        XCTAssertEqual(lines[7], "")
        XCTAssertEqual(signer.keyID.count, 16)
        XCTAssertEqual(signer.keyID, KeyedHasherHex.hex(SHA256.hash(data: signer.publicKey.derRepresentation).prefix(8)))
        XCTAssertEqual(AuditTime.iso8601(milliseconds: 0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(AuditTime.iso8601(milliseconds: 951_782_400_000 - 1), "2000-02-28T23:59:59.999Z")
        XCTAssertEqual(AuditTime.milliseconds(iso8601: "2000-02-29T00:00:00.000Z"), 951_782_400_000)
        XCTAssertNil(AuditTime.milliseconds(iso8601: "2001-02-29T00:00:00.000Z"))
        XCTAssertThrowsError(try AuditCheckpoint.parse(checkpoint.text.replacingOccurrences(of: "seq 0", with: "seq  0")))
    }

    func testOpenSSLVerifiesTheSignatureWithThePublicKeyFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("audit-checkpoint-key.pem").path
        let previous = umask(0o022)
        let signer = try CheckpointSigner.loadOrCreate(keyFile: keyFile)
        umask(previous)
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let publicPath = directory.appendingPathComponent("audit-checkpoint-key.pub.pem").path
        XCTAssertEqual(CheckpointSigner.publicKeyPath(forKeyFile: keyFile), publicPath)
        XCTAssertTrue(try String(contentsOfFile: keyFile, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertTrue(try String(contentsOfFile: publicPath, encoding: .utf8).hasPrefix("-----BEGIN PUBLIC KEY-----"))
        XCTAssertEqual(try CheckpointSigner.loadOrCreate(keyFile: keyFile).keyID, signer.keyID, "loaded, not replaced")
        XCTAssertEqual(CheckpointSigner.publicKeyPath(forKeyFile: "/k/key"), "/k/key.pub.pem")

        let checkpoint = try signer.sign(seq: 42, hash: String(repeating: "ab", count: 32), at: start)
        let body = directory.appendingPathComponent("body.txt"), signature = directory.appendingPathComponent("sig.der")
        try Data(checkpoint.body.utf8).write(to: body)
        try checkpoint.signature.write(to: signature)
        let output = try Shell.output("/usr/bin/openssl", "dgst", "-sha256", "-verify", publicPath, "-signature", signature.path, body.path)
        XCTAssertEqual(output.trimmingCharacters(in: .whitespacesAndNewlines), "Verified OK")
        // The same check must fail for a body that was not signed.
        try Data(checkpoint.body.replacingOccurrences(of: "seq 42", with: "seq 43").utf8).write(to: body)
        XCTAssertThrowsError(try Shell.output("/usr/bin/openssl", "dgst", "-sha256", "-verify", publicPath, "-signature", signature.path, body.path))
        // The key id is over the public key's DER, as openssl writes it.
        let der = directory.appendingPathComponent("pub.der")
        try Shell.run("/usr/bin/openssl", "pkey", "-pubin", "-in", publicPath, "-outform", "DER", "-out", der.path)
        XCTAssertEqual(signer.keyID, KeyedHasherHex.hex(SHA256.hash(data: try Data(contentsOf: der)).prefix(8)))
    }

    func testAKeyFileReadableByOthersIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem").path
        _ = try CheckpointSigner.loadOrCreate(keyFile: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        XCTAssertThrowsError(try CheckpointSigner.load(keyFile: keyFile)) { error in
            XCTAssertTrue("\(error)".contains("chmod 600"), "\(error)")
        }
    }

    func testIncrementalStartsAtTheCheckpointAndFullAtTheStart() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(10, on: db)
            let first = try await integrity.verify(full: false, now: start, on: db)
            XCTAssertEqual(first.summary, "audit trail intact: 10 entries checked (seq 1..10)", "no checkpoint yet: from the start")
            _ = try await integrity.checkpointNow(now: start, on: db)  // seq 10; entry 11 is audit.checkpoint
            try await append(4, on: db)
            let incremental = try await integrity.verify(full: false, now: start, on: db)
            XCTAssertTrue(incremental.isIntact, incremental.summary)
            XCTAssertEqual(incremental.fromSeq, 10)
            XCTAssertEqual(incremental.toSeq, 15)
            XCTAssertEqual(incremental.checkedEntries, 6, "the checkpoint's entry and the five after it")
            let full = try await integrity.verify(full: true, now: start, on: db)
            XCTAssertEqual(full.summary, "audit trail intact: 15 entries checked (seq 1..15)")
            XCTAssertTrue(full.full)
            let last = try await integrity.lastVerification(on: db)
            XCTAssertEqual(last, full, "recorded")

            // A checkpoint signed by a key the verifier does not know is no start point.
            let stranger = AuditIntegrity(signer: CheckpointSigner(privateKey: .init()))
            let fromStart = try await stranger.verify(full: false, now: start, on: db)
            XCTAssertEqual(fromStart.fromSeq, 1)
            XCTAssertEqual(fromStart.checkedEntries, 15)
        }
    }

    func testATamperedRowIsFoundByBothAndNamed() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(5, on: db)
            _ = try await integrity.checkpointNow(now: start, on: db)  // at 5
            try await append(5, on: db)  // 7...11
            try await dropAppendOnlyTriggers(db)
            try await sql(db).raw("UPDATE audit_log SET details = '{\"n\":\"x\"}' WHERE seq = 8").run()
            for full in [false, true] {
                let result = try await integrity.verify(full: full, now: start, on: db)
                XCTAssertEqual(result.firstBrokenSeq, 8, "full: \(full)")
                XCTAssertEqual(result.summary, "audit trail broken at entry 8: entry 8 was changed after it was written")
            }
            let recorded = try await integrity.lastVerification(on: db)
            XCTAssertEqual(recorded?.firstBrokenSeq, 8)
            do {
                _ = try await integrity.checkpointNow(now: start, on: db)
                XCTFail("a broken chain is never signed")
            } catch AuditIntegrityError.chainBroken(let verification) {
                XCTAssertEqual(verification.firstBrokenSeq, 8)
            }
            let latest = try await integrity.latestCheckpoint(on: db)
            XCTAssertEqual(latest?.seq, 5)
        }
    }

    func testADeletedRowIsFound() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(5, on: db)
            _ = try await integrity.checkpointNow(now: start, on: db)
            try await append(5, on: db)
            try await dropAppendOnlyTriggers(db)
            try await sql(db).raw("DELETE FROM audit_log WHERE seq = 9").run()
            for full in [false, true] {
                let result = try await integrity.verify(full: full, now: start, on: db)
                XCTAssertEqual(result.summary, "audit trail broken at entry 9: entry 9 is missing", "full: \(full)")
            }
            // A removed tail, head moved back with it: the checkpoint still names what was signed.
            try await sql(db).raw("DELETE FROM audit_log WHERE seq >= 3").run()
            let second = try await AuditEntry.find(2, on: db)
            try await sql(db).raw("UPDATE audit_head SET seq = 2, hash = \(bind: second!.hash) WHERE id = 1").run()
            let result = try await integrity.verify(full: false, now: start, on: db)
            XCTAssertEqual(result.firstBrokenSeq, 5, result.summary)
            let full = try await integrity.verify(full: true, now: start, on: db)
            XCTAssertEqual(full.firstBrokenSeq, 3, full.summary)
            XCTAssertTrue(full.problem?.contains("signed entry 5") ?? false, full.summary)
        }
    }

    func testARewrittenTailIsFoundThroughTheCheckpoint() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(4, on: db)
            _ = try await integrity.checkpointNow(now: start, on: db)  // at 4; 5 is audit.checkpoint
            try await append(3, on: db)  // 6...8
            _ = try await integrity.checkpointNow(now: start.addingTimeInterval(3600), on: db)  // at 8; 9 audit.checkpoint
            try await append(2, on: db)
            try await dropAppendOnlyTriggers(db)
            try await rewriteTail(from: 6, on: db)

            let incremental = try await integrity.verify(full: false, now: start, on: db)
            XCTAssertEqual(incremental.firstBrokenSeq, 8)
            XCTAssertEqual(incremental.problem,
                           "entry 8 no longer has the hash signed in the checkpoint of 2027-01-15T09:00:00.000Z: the trail was rewritten after entry 4, the previous checkpoint that still matches")
            let full = try await integrity.verify(full: true, now: start, on: db)
            XCTAssertEqual(full.firstBrokenSeq, 8, full.summary)
            XCTAssertEqual(full.problem, incremental.problem)
        }
    }

    func testRetentionKeepsTheRemainderVerifiable() async throws {
        try await withDatabase { db in
            let signer = CheckpointSigner(privateKey: .init())
            let integrity = integrity(signer, retention: .seconds(10 * 86400))
            try await append(6, at: start, on: db)  // 1...6, old
            try await append(4, at: start.addingTimeInterval(20 * 86400), on: db)  // 7...10
            let now = start.addingTimeInterval(25 * 86400)
            let report = try await integrity.runScheduled(now: now, on: db)
            XCTAssertNil(report.brokenVerification)
            XCTAssertEqual(report.checkpoint?.seq, 10, "the hourly checkpoint first")
            XCTAssertEqual(report.retentionCheckpoint?.seq, 6, "then one at the cut")
            XCTAssertEqual(report.deletedEntries, 6)
            let remaining = try await AuditEntry.query(on: db).sort(\.$id).all()
            XCTAssertEqual(remaining.first?.id, 7)
            XCTAssertEqual(remaining.map(\.action).suffix(3), ["audit.checkpoint", "audit.checkpoint", "audit.retention"])
            XCTAssertEqual(remaining.last?.detailValues, ["cut_seq": "6", "deleted": "6"])

            let full = try await integrity.verify(full: true, now: now, on: db)
            XCTAssertTrue(full.isIntact, full.summary)
            XCTAssertEqual(full.fromSeq, 7)
            let incremental = try await integrity.verify(full: false, now: now, on: db)
            XCTAssertTrue(incremental.isIntact, incremental.summary)
            // Outsiders with only the public key agree.
            let outsider = AuditIntegrity(signer: nil, publicKeys: [signer.publicKey])
            let outside = try await outsider.verify(full: true, now: now, on: db)
            XCTAssertTrue(outside.isIntact, outside.summary)
            // Without a key that vouches for the cut, deleted entries are not taken on trust.
            let unknowing = try await AuditIntegrity(signer: nil).verify(full: true, now: now, on: db)
            XCTAssertEqual(unknowing.firstBrokenSeq, 6, unknowing.summary)

            // Deleting above the floor is still refused, and so is moving the floor down.
            for statement in ["DELETE FROM audit_log WHERE seq = 8", "UPDATE audit_log SET actor = 'x' WHERE seq = 8"] {
                do {
                    try await sql(db).raw(SQLQueryString(statement)).run()
                    XCTFail("\(statement) must be refused")
                } catch {
                    XCTAssertTrue(String(reflecting: error).contains("append-only"), String(reflecting: error))
                }
            }
            do {
                try await sql(db).raw("UPDATE audit_floor SET seq = 2 WHERE id = 1").run()
                XCTFail("the floor only moves up")
            } catch {
                XCTAssertTrue(String(reflecting: error).contains("only moves up"), String(reflecting: error))
            }
            if isPostgreSQL(db) {
                do {
                    try await sql(db).raw("TRUNCATE audit_log").run()
                    XCTFail("TRUNCATE must be refused")
                } catch {
                    XCTAssertTrue(String(reflecting: error).contains("append-only"), String(reflecting: error))
                }
            }

            // A second run within the hour and with nothing older: nothing to do.
            let again = try await integrity.runScheduled(now: now.addingTimeInterval(60), on: db)
            XCTAssertEqual(again, AuditMaintenanceReport())
        }
    }

    /// Issue 21, item 7: `portal audit rotate-key` mid-run. The retention floor's checkpoint was
    /// signed by the old key; the new key signs from then on; with the public keys kept beside the
    /// key file both verify, in full and incrementally, in the portal and outside it.
    func testARotatedCheckpointKeyKeepsOldCheckpointsVerifiable() async throws {
        try await withDatabase { db in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckey-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let keyFile = directory.appendingPathComponent("audit-checkpoint-key.pem").path
            let oldSigner = try CheckpointSigner.loadOrCreate(keyFile: keyFile)
            try await append(6, at: start, on: db)
            try await append(4, at: start.addingTimeInterval(20 * 86400), on: db)
            let now = start.addingTimeInterval(25 * 86400)
            let report = try await integrity(oldSigner, retention: .seconds(10 * 86400)).runScheduled(now: now, on: db)
            XCTAssertEqual(report.deletedEntries, 6, "the floor's checkpoint is the old key's")

            let (old, new) = try CheckpointSigner.rotate(keyFile: keyFile)
            XCTAssertEqual(old.keyID, oldSigner.keyID)
            XCTAssertNotEqual(new.keyID, old.keyID)
            XCTAssertEqual(try CheckpointSigner.load(keyFile: keyFile).keyID, new.keyID, "the key file holds the new key")
            let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600)
            let kept = CheckpointSigner.keptPublicKeyPath(forKeyFile: keyFile, keyID: old.keyID)
            XCTAssertTrue(kept.hasSuffix("audit-checkpoint-key.\(old.keyID).pub.pem"), kept)
            XCTAssertEqual(CheckpointSigner.keyID(of: try CheckpointSigner.loadPublicKey(at: kept)), old.keyID)
            let publicKeys = try CheckpointSigner.publicKeys(forKeyFile: keyFile)
            XCTAssertEqual(Set(publicKeys.map(CheckpointSigner.keyID(of:))), [old.keyID, new.keyID])

            try await append(2, at: now, on: db)
            let rotated = AuditIntegrity(signer: new, checkpointInterval: .seconds(3600), retention: .seconds(10 * 86400), publicKeys: publicKeys)
            let checkpoint = try await rotated.checkpointNow(now: now.addingTimeInterval(3600), on: db)
            XCTAssertEqual(checkpoint.keyID, new.keyID)
            for full in [true, false] {
                let verification = try await rotated.verify(full: full, now: now.addingTimeInterval(3600), on: db)
                XCTAssertTrue(verification.isIntact, verification.summary)
            }
            let outside = try await AuditIntegrity(signer: nil, publicKeys: publicKeys).verify(full: true, now: now, on: db)
            XCTAssertTrue(outside.isIntact, outside.summary)
            // Without the kept public key the floor's checkpoint vouches for nothing.
            let forgetful = try await AuditIntegrity(signer: new).verify(full: true, now: now, on: db)
            XCTAssertFalse(forgetful.isIntact, forgetful.summary)
        }
    }

    func testRetentionDeletesNothingOfABrokenChain() async throws {
        try await withDatabase { db in
            let integrity = integrity(retention: .seconds(86400))
            try await append(4, at: start, on: db)
            try await dropAppendOnlyTriggers(db)
            try await sql(db).raw("UPDATE audit_log SET actor = 'mallory' WHERE seq = 2").run()
            let report = try await integrity.runScheduled(now: start.addingTimeInterval(2 * 86400), on: db)
            XCTAssertEqual(report.brokenVerification?.firstBrokenSeq, 2)
            XCTAssertNil(report.checkpoint)
            XCTAssertEqual(report.deletedEntries, 0)
            let count = try await AuditEntry.query(on: db).count()
            XCTAssertEqual(count, 4)
        }
    }

    private func checkpointCount(on db: any Database) async throws -> Int {
        struct Row: Decodable { let n: Int64 }
        return Int(try await sql(db).raw("SELECT COUNT(*) AS n FROM audit_checkpoints").first(decoding: Row.self)?.n ?? 0)
    }

    /// Entries pass the retention cut every minute; the job must still sign the head hourly and
    /// apply retention only then (not sign a retention checkpoint every minute).
    func testRetentionRunsWithTheHourlyCheckpointAndDoesNotStarveIt() async throws {
        try await withDatabase { db in
            var integrity = integrity(retention: .seconds(10 * 86400))
            integrity.deletionBatch = 7  // several batches
            for minute in 0..<120 {  // one old entry a minute: 1...120
                try await AuditLog().append(AuditEvent(action: .signIn, outcome: .success, actor: "old\(minute)"),
                                            at: start.addingTimeInterval(Double(minute) * 60), on: db)
            }
            let first = start.addingTimeInterval(10 * 86400 + 30 * 60)  // the cut: entries of minutes 0..<30
            try await append(3, at: first, on: db)  // 121...123
            let report = try await integrity.runScheduled(now: first, on: db)
            XCTAssertEqual(report.checkpoint?.seq, 123)
            XCTAssertEqual(report.retentionCheckpoint?.seq, 30)
            XCTAssertEqual(report.deletedEntries, 30)
            let signed = try await checkpointCount(on: db)
            XCTAssertEqual(signed, 2)

            // Every minute of the next hour another entry passes the cut: nothing is signed or deleted.
            for minute in 1..<60 {
                let quiet = try await integrity.runScheduled(now: first.addingTimeInterval(Double(minute) * 60), on: db)
                XCTAssertEqual(quiet, AuditMaintenanceReport(), "minute \(minute)")
            }
            let unchanged = try await checkpointCount(on: db)
            XCTAssertEqual(unchanged, 2, "no retention checkpoint every minute")

            // An hour on: the head is signed again, and retention catches up in the same run.
            let hourly = try await integrity.runScheduled(now: first.addingTimeInterval(3600), on: db)
            XCTAssertNotNil(hourly.checkpoint, "the head checkpoint is due an hour after the last")
            XCTAssertGreaterThan(hourly.checkpoint?.seq ?? 0, 123)
            XCTAssertEqual(hourly.retentionCheckpoint?.seq, 90)
            XCTAssertEqual(hourly.deletedEntries, 60, "counted per batch")
            let lowest = try await AuditEntry.query(on: db).sort(\.$id).first()
            XCTAssertEqual(lowest?.id, 91)
            let retained = try await AuditEntry.query(on: db).filter(\.$action == "audit.retention").sort(\.$id).all()
            XCTAssertEqual(retained.map(\.detailValues), [["cut_seq": "30", "deleted": "30"], ["cut_seq": "90", "deleted": "60"]])
            // Each signing run appends its two checkpoint entries last, head first.
            let checkpoints = try await AuditEntry.query(on: db).filter(\.$action == "audit.checkpoint").sort(\.$id).all()
            XCTAssertEqual(checkpoints.map(\.detailValues), [
                ["seq": "123"], ["seq": "30", "reason": "retention"],
                ["seq": "\(hourly.checkpoint?.seq ?? 0)"], ["seq": "90", "reason": "retention"],
            ])
            let full = try await integrity.verify(full: true, now: first.addingTimeInterval(3600), on: db)
            XCTAssertTrue(full.isIntact, full.summary)
        }
    }

    /// PostgreSQL: a run with nothing due takes no lock, and a run that finds the floor locked by
    /// another instance leaves the round to it instead of queueing behind it.
    func testScheduledRunNeitherWaitsForNorTakesTheFloorLockNeedlessly() async throws {
        try await withDatabase { db in
            guard isPostgreSQL(db) else { return }
            let integrity = integrity()
            try await append(3, on: db)
            let signed = try await integrity.runScheduled(now: start, on: db)
            XCTAssertEqual(signed.checkpoint?.seq, 3)

            /// Runs `body` while another connection holds the floor row for two seconds.
            func whileFloorIsHeld(_ body: () async throws -> Void) async throws {
                let (locked, lockedNow) = AsyncStream<Void>.makeStream()
                let holder = Task {
                    try await db.transaction { tx in
                        _ = try await sql(tx).raw("SELECT seq FROM audit_floor WHERE id = 1 FOR UPDATE").all()
                        lockedNow.yield()
                        try await Task.sleep(for: .seconds(2))
                    }
                }
                for await _ in locked { break }
                try await body()
                try await holder.value
            }

            try await whileFloorIsHeld {
                let clock = ContinuousClock()
                let notDue = try await clock.measure {
                    let report = try await integrity.runScheduled(now: start.addingTimeInterval(60), on: db)
                    XCTAssertEqual(report, AuditMaintenanceReport())
                }
                XCTAssertLessThan(notDue, .seconds(1), "nothing due: no lock wanted")
                let due = try await clock.measure {
                    let report = try await integrity.runScheduled(now: start.addingTimeInterval(3600), on: db)
                    XCTAssertEqual(report, AuditMaintenanceReport(), "another instance holds the floor: its round")
                }
                XCTAssertLessThan(due, .seconds(1), "SKIP LOCKED, not a queue")
            }
            let after = try await integrity.runScheduled(now: start.addingTimeInterval(3600), on: db)
            XCTAssertNotNil(after.checkpoint, "the next run signs")
        }
    }

    func testScheduledRunsFromSeveralInstancesSignOnce() async throws {
        try await withDatabase { db in
            let integrity = integrity()
            try await append(3, on: db)
            let now = start
            let reports = try await withThrowingTaskGroup(of: AuditMaintenanceReport.self) { group in
                for _ in 0..<4 { group.addTask { try await integrity.runScheduled(now: now, on: db) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(reports.compactMap(\.checkpoint).count, 1)
            let verification = try await integrity.verify(full: true, now: start, on: db)
            XCTAssertTrue(verification.isIntact, verification.summary)
        }
    }
}

/// Lowercase hex, as the chain writes hashes.
enum KeyedHasherHex {
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
