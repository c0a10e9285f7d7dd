import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import Audit

/// The audit chain, the database-backed limits and the embedded verification service, each run
/// against SQLite and (when configured) PostgreSQL.
final class AuditAndStorageTests: XCTestCase {
    let logger = TestDatabases.testLogger
    let migrations: [any Migration] = [CreateRateLimitTables(), CreateAuditLog(), CreateTeleTANRecords(), AddRevocation(), AddLockoutRefusals()]

    private func withDatabase(_ body: (any Database) async throws -> Void) async throws {
        try await TestDatabases.forEachMigrated(migrations, body)
    }

    private func appendSample(_ count: Int, on db: any Database) async throws {
        for index in 0..<count {
            try await AuditLog().append(AuditEvent(
                action: .signIn, outcome: index % 2 == 0 ? .success : .failure, actor: "user\(index)",
                address: "192.0.2.\(index)", requestID: "req-\(index)", details: ["n": "\(index)"]), on: db)
        }
    }

    func testChainIsIntactAndSequenced() async throws {
        try await withDatabase { db in
            try await appendSample(5, on: db)
            let report = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(report.isIntact, "\(report)")
            XCTAssertEqual(report.checkedEntries, 5)
            let entries = try await AuditEntry.query(on: db).sort(\.$id).all()
            XCTAssertEqual(entries.map(\.id), [1, 2, 3, 4, 5])
            XCTAssertEqual(entries[1].previousHash, entries[0].hash)
            XCTAssertEqual(entries[3].detailValues, ["n": "3"])
        }
    }

    func testDatabaseAndSwiftComputeTheSameHashForAwkwardText() async throws {
        // On PostgreSQL the entry's hash is computed by the database (one-statement append); the
        // verifier recomputes it in Swift. Non-ASCII, escapes, missing fields and a fake "seq"
        // inside a value must give the same bytes on both sides.
        try await withDatabase { db in
            let awkward = [#"Jürgen "Q" \ / ñ 😀"#, "line\nbreak\ttab", #""seq":-7777777777777777,"x"#, "ascii"]
            for (index, text) in awkward.enumerated() {
                try await AuditLog().append(AuditEvent(
                    action: .signIn, outcome: .failure, actor: text, address: index % 2 == 0 ? nil : "2001:db8::1",
                    requestID: nil, subject: text, details: ["typed": text, "€": "\u{0}"]), on: db)
            }
            let report = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(report.isIntact, "\(report)")
            XCTAssertEqual(report.checkedEntries, awkward.count)
            let stored = try await AuditEntry.query(on: db).sort(\.$id).all()
            for entry in stored {
                XCTAssertEqual(entry.hash, AuditChain.hash(of: entry, previous: entry.previousHash))
            }
        }
    }

    func testTableRefusesUpdatesAndDeletes() async throws {
        try await withDatabase { db in
            try await appendSample(2, on: db)
            // The triggers' own message, not any error (a typo in the SQL would fail too).
            do {
                try await sql(db).raw("UPDATE audit_log SET actor = 'mallory' WHERE seq = 1").run()
                XCTFail("UPDATE must be refused")
            } catch {
                XCTAssertTrue(String(reflecting: error).contains("append-only"), String(reflecting: error))
            }
            do {
                try await sql(db).raw("DELETE FROM audit_log WHERE seq = 2").run()
                XCTFail("DELETE must be refused")
            } catch {
                XCTAssertTrue(String(reflecting: error).contains("append-only"), String(reflecting: error))
            }
            let report = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(report.isIntact)
        }
    }

    func testVerifierFindsChangedRemovedAndTruncatedEntries() async throws {
        try await withDatabase { db in
            try await appendSample(6, on: db)
            try await dropAppendOnlyTriggers(db)

            try await sql(db).raw("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3").run()
            var report = try await AuditChainVerifier().verify(on: db)
            XCTAssertEqual(report.firstBrokenSeq, 3)
            XCTAssertEqual(report.checkedEntries, 2)
            try await sql(db).raw("UPDATE audit_log SET actor = 'user2' WHERE seq = 3").run()
            let repaired = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(repaired.isIntact)

            try await sql(db).raw("DELETE FROM audit_log WHERE seq = 4").run()
            report = try await AuditChainVerifier().verify(on: db)
            XCTAssertEqual(report.firstBrokenSeq, 4)

            try await sql(db).raw("DELETE FROM audit_log WHERE seq >= 4").run()
            report = try await AuditChainVerifier().verify(on: db)
            XCTAssertEqual(report.firstBrokenSeq, 4, "a cut-off tail is found through the head row")
        }
    }

    private func dropAppendOnlyTriggers(_ db: any Database) async throws {
        if sql(db).dialect.name == "postgresql" {
            try await sql(db).raw("DROP TRIGGER audit_log_no_change ON audit_log").run()
        } else {
            try await sql(db).raw("DROP TRIGGER audit_log_no_update").run()
            try await sql(db).raw("DROP TRIGGER audit_log_no_delete").run()
        }
    }

    func testAppendInsideARolledBackTransactionLeavesNoTrace() async throws {
        struct Abort: Error {}
        try await withDatabase { db in
            try await appendSample(1, on: db)
            do {
                try await db.transaction { tx in
                    try await AuditLog().append(AuditEvent(action: .teleTANIssue, outcome: .success, actor: "a"), on: tx)
                    throw Abort()
                }
            } catch is Abort {}
            try await appendSample(1, on: db)
            let report = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(report.isIntact)
            XCTAssertEqual(report.checkedEntries, 2)
        }
    }

    func testConcurrentAppendsKeepTheChain() async throws {
        try await withDatabase { db in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for index in 0..<10 {
                            try await AuditLog().append(AuditEvent(action: .signIn, outcome: .success, actor: "w\(worker)-\(index)"), on: db)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let report = try await AuditChainVerifier().verify(on: db)
            XCTAssertTrue(report.isIntact, "\(report)")
            XCTAssertEqual(report.checkedEntries, 80)
        }
    }

    func testRateLimiterCountsWithinTheWindowAndSaysWhenToRetry() async throws {
        try await withDatabase { db in
            let rule = RateRule(name: "test", limit: 2, window: .seconds(60))
            let limiter = RateLimiter()
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            try await limiter.consume([(rule, "a")], at: start, on: db)
            try await limiter.consume([(rule, "a")], at: start.addingTimeInterval(10), on: db)
            do {
                try await db.transaction { tx in
                    try await limiter.consume([(rule, "a")], at: start.addingTimeInterval(20), on: tx)
                }
                XCTFail("third event within a minute must be refused")
            } catch let limited as RateLimitExceeded {
                XCTAssertEqual(limited.rule, rule)
                XCTAssertEqual(Double(limited.retryAfter.components.seconds), 41, accuracy: 2)
            }
            // The refused event was rolled back, another key is independent.
            let countAfterRefusal = try await limiter.count(rule, key: "a", at: start.addingTimeInterval(20), on: db)
            XCTAssertEqual(countAfterRefusal, 2)
            try await limiter.consume([(rule, "b")], at: start.addingTimeInterval(20), on: db)
            // After the window the first event no longer counts.
            try await limiter.consume([(rule, "a")], at: start.addingTimeInterval(62), on: db)
            try await limiter.purge(before: start.addingTimeInterval(3600), on: db)
            let countAfterPurge = try await limiter.count(rule, key: "a", at: start.addingTimeInterval(62), on: db)
            XCTAssertEqual(countAfterPurge, 0)
        }
    }

    func testLockouts() async throws {
        try await withDatabase { db in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let lockouts = Lockouts()
            let notYet = try await lockouts.lockedUntil(scope: "user", key: "alice", now: now, on: db)
            XCTAssertNil(notYet)
            try await lockouts.lock(scope: "user", key: "alice", until: now.addingTimeInterval(900), now: now, on: db)
            let locked = try await lockouts.lockedUntil(scope: "user", key: "alice", now: now.addingTimeInterval(899), on: db)
            XCTAssertNotNil(locked)
            let other = try await lockouts.lockedUntil(scope: "address", key: "alice", now: now, on: db)
            XCTAssertNil(other)
            let over = try await lockouts.lockedUntil(scope: "user", key: "alice", now: now.addingTimeInterval(901), on: db)
            XCTAssertNil(over)
        }
    }

    func testEmbeddedServiceStoresOnlyAKeyedHashAndEnforcesTheGlobalLimit() async throws {
        try await withDatabase { db in
            let key = SymmetricKey(size: .bits256)
            let hasher = KeyedHasher(key: key)
            let service = EmbeddedVerificationService(
                hasher: hasher, globalLimit: EmbeddedVerificationService.defaultGlobalLimit(perHour: 2), logger: logger)
            let first = try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: db)
            let event = try await service.issueTeleTAN(TeleTANRequest(type: .event, requestedBy: "bob"), within: db)
            XCTAssertNotNil(TeleTAN(first.teleTAN.value))
            XCTAssertEqual(first.validUntil.timeIntervalSince(first.issuedAt), 3600, accuracy: 1)
            XCTAssertEqual(event.validUntil.timeIntervalSince(event.issuedAt), 172_800, accuracy: 1)

            let records = try await TeleTANRecord.query(on: db).all()
            XCTAssertEqual(Set(records.map(\.hash)), [
                hasher.hash(first.teleTAN.value, for: .teleTANStorage), hasher.hash(event.teleTAN.value, for: .teleTANStorage),
            ])
            XCTAssertFalse(records.contains { $0.hash.contains(first.teleTAN.value) })

            do {
                _ = try await db.transaction { tx in
                    try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "carol"), within: tx)
                }
                XCTFail("the third teleTAN in an hour exceeds a global limit of 2")
            } catch VerificationServiceError.globalLimitReached(let retryAfter) {
                XCTAssertGreaterThan(retryAfter, .zero)
            }
            let count = try await TeleTANRecord.query(on: db).count()
            XCTAssertEqual(count, 2)
        }
    }

    func testGlobalLimitWarnsAt80PercentAndRollsOver() async throws {
        XCTAssertEqual(EmbeddedVerificationService.defaultGlobalLimit().limit, 1000)
        XCTAssertEqual(EmbeddedVerificationService.defaultGlobalLimit().window, .seconds(3600))
        try await withDatabase { db in
            let recorder = LogRecorder()
            let clock = TestClock()
            // 20 over 8 shards: the count is the sum of every shard, not one shard's share.
            let service = EmbeddedVerificationService(
                hasher: KeyedHasher(key: SymmetricKey(size: .bits256)),
                globalLimit: EmbeddedVerificationService.defaultGlobalLimit(perHour: 20),
                logger: recorder.logger(), now: clock.function)
            func warnings() -> [String] { recorder.lines.filter { $0.level == .warning }.map(\.message) }
            for _ in 0..<15 {
                _ = try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: db)
            }
            XCTAssertEqual(warnings(), [], "15 of 20 is under 80 %")
            _ = try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: db)
            XCTAssertEqual(warnings(), ["global teleTAN limit at 80 % or more"], "16 of 20 is 80 %")
            for _ in 0..<4 {
                _ = try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: db)
            }
            clock.advance(seconds: 1800)
            do {
                _ = try await db.transaction { tx in
                    try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: tx)
                }
                XCTFail("the 21st teleTAN within the hour exceeds the limit of 20")
            } catch VerificationServiceError.globalLimitReached(let retryAfter) {
                XCTAssertGreaterThan(retryAfter, .seconds(1000), "the first of the 20 leaves the window in about 30 min")
                XCTAssertLessThanOrEqual(retryAfter, .seconds(1860))
            }
            XCTAssertEqual(warnings().last, "global teleTAN limit reached")
            // A rolling hour: once the first issuances are more than an hour old, issuing works again.
            clock.advance(seconds: 1800 + 61)
            let again = try await service.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "alice"), within: db)
            XCTAssertNotNil(TeleTAN(again.teleTAN.value))
            XCTAssertFalse(recorder.lines.contains { line in line.message.contains(again.teleTAN.value)
                || line.metadata.values.contains { $0.contains(again.teleTAN.value) } })
        }
    }

    func testANewSQLiteFileIsOwnerOnly() async throws {
        // Under a permissive umask, as a service may run: the mode must come from us, not from it.
        let previous = umask(0o022)
        defer { umask(previous) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("portal.sqlite").path
        let database = try await PortalDatabase.openMigrated(location: .sqlite(path: path), migrations: migrations, logger: logger)
        await database.shutdown()
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }
}
