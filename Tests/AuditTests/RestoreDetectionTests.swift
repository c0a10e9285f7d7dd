import FluentKit
import Foundation
import SQLKit
import Storage
import TestSupport
import XCTest
@testable import Audit

/// A checkpoint handed out earlier against the database: present, a restore from an older
/// backup (entries missing, or their seqs written again after the restore), or a rewrite. On
/// SQLite and (when configured) PostgreSQL.
final class RestoreDetectionTests: XCTestCase {
    let migrations: [any Migration] = [CreateAuditLog(), AddCheckpointsAndRetention()]
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func append(_ count: Int, at time: Date, on db: any Database) async throws {
        for index in 0..<count {
            try await AuditLog().append(AuditEvent(action: .signIn, outcome: .success, actor: "user\(index)"), at: time, on: db)
        }
    }

    /// Back to entry `seq`, as a restored backup taken then would be (triggers off, like a restore).
    private func rollBack(to seq: Int64, on db: any Database) async throws {
        if isPostgreSQL(db) {
            try await sql(db).raw("DROP TRIGGER audit_log_no_change ON audit_log").run()
        } else {
            try await sql(db).raw("DROP TRIGGER audit_log_no_delete").run()
        }
        let hash = try await AuditRow.find(seq, on: db)!.hash
        try await sql(db).raw("DELETE FROM audit_log WHERE seq > \(bind: seq)").run()
        try await sql(db).raw("UPDATE audit_head SET seq = \(bind: seq), hash = \(bind: hash) WHERE id = 1").run()
    }

    private func restoreEvents(on db: any Database) async throws -> [AuditRow] {
        try await AuditRow.page(after: 0, through: .max, limit: 1000, on: db).filter { $0.action == "audit.restore_detected" }
    }

    func testPresentCheckpointIsFoundAndNothingIsRecorded() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await append(3, at: start, on: db)
            let checkpoint = try await AuditIntegrity(signer: CheckpointSigner(privateKey: .init())).checkpointNow(now: start, on: db)
            let outcome = try await RestoreDetection().check(checkpoint, now: start.addingTimeInterval(60), on: db)
            XCTAssertEqual(outcome, .present)
            let events = try await restoreEvents(on: db)
            XCTAssertEqual(events, [])
        }
    }

    func testRestoreFromOlderBackupIsReportedWithTheMissingEntriesOnceAlsoAfterNewEntries() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await append(4, at: start, on: db)  // the backup is taken after entry 4
            try await append(3, at: start.addingTimeInterval(10), on: db)
            let checkpoint = try await AuditIntegrity(signer: CheckpointSigner(privateKey: .init()))
                .checkpointNow(now: start.addingTimeInterval(20), on: db)
            XCTAssertEqual(checkpoint.seq, 7)
            try await rollBack(to: 4, on: db)

            let later = start.addingTimeInterval(3600)
            guard case .restoredOlder(let gap) = try await RestoreDetection().check(checkpoint, now: later, on: db) else {
                return XCTFail("not detected")
            }
            XCTAssertEqual(gap.firstMissing, 5)
            XCTAssertEqual(gap.missingCount, 3)
            XCTAssertTrue(gap.newlyRecorded)
            XCTAssertEqual(gap.recordedAt, 5)
            XCTAssertEqual(gap.description, "restored from a backup older than checkpoint 7: entries 5..7 (3 entries) are missing; recorded as audit entry 5")
            let recorded = try await restoreEvents(on: db)
            XCTAssertEqual(recorded.map(\.detailValues), [["checkpoint_seq": "7", "missing_from": "5", "missing_to": "7", "missing_count": "3"]])

            // The portal writes on over the lost seqs: the same report, not recorded again.
            try await append(5, at: later.addingTimeInterval(60), on: db)
            let again = try await RestoreDetection().check(checkpoint, now: later.addingTimeInterval(120), on: db)
            XCTAssertEqual(again, .restoredOlder(.init(checkpointSeq: 7, firstMissing: 5, recordedAt: 5, newlyRecorded: false)))
            let recordedAgain = try await restoreEvents(on: db)
            XCTAssertEqual(recordedAgain.count, 1)
        }
    }

    func testEntryRewrittenBeforeTheCheckpointIsNotTakenForARestore() async throws {
        try await TestDatabases.forEachMigrated(migrations) { db in
            try await append(5, at: start, on: db)
            let checkpoint = try await AuditIntegrity(signer: CheckpointSigner(privateKey: .init()))
                .checkpointNow(now: start.addingTimeInterval(20), on: db)
            if isPostgreSQL(db) {
                try await sql(db).raw("DROP TRIGGER audit_log_no_change ON audit_log").run()
            } else {
                try await sql(db).raw("DROP TRIGGER audit_log_no_update").run()
            }
            try await sql(db).raw("UPDATE audit_log SET hash = \(bind: String(repeating: "a", count: 64)) WHERE seq = 5").run()
            let outcome = try await RestoreDetection().check(checkpoint, now: start.addingTimeInterval(3600), on: db)
            XCTAssertEqual(outcome, .rewritten(seq: 5))
            let events = try await restoreEvents(on: db)
            XCTAssertEqual(events, [])
        }
    }
}
