import Crypto
import FluentKit
import Foundation
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest

/// Status and revocation in the embedded verification service, against SQLite and (when
/// configured) PostgreSQL.
final class EmbeddedRevocationTests: XCTestCase {
    let logger = TestDatabases.testLogger
    let migrations: [any Migration] = [CreateRateLimitTables(), CreateTeleTANRecords(), CreateLifecycleRecords(), AddRevocation()]

    private func withDatabase(_ body: (any Database) async throws -> Void) async throws {
        try await TestDatabases.forEachMigrated(migrations, body)
    }

    func testStatusesAndRevocationOfTheIssuersOwnTeleTANs() async throws {
        try await withDatabase { db in
            let clock = TestClock()
            let hasher = KeyedHasher(key: SymmetricKey(size: .bits256))
            let service = EmbeddedVerificationService(
                hasher: hasher, globalLimit: EmbeddedVerificationService.defaultGlobalLimit(), logger: logger, now: clock.function)
            let lifecycle = TeleTANLifecycle(hasher: hasher, now: clock.function)
            func issue(_ username: String, _ type: TeleTANType = .test) async throws -> IssuedTeleTAN {
                try await service.issueTeleTAN(TeleTANRequest(type: type, requestedBy: username), within: db)
            }
            let alice = Issuer(username: "alice", roles: ["c19hotline"])

            let expired = try await issue("alice")
            clock.advance(seconds: 3601)
            let redeemed = try await issue("alice")
            let revoked = try await issue("alice")
            let unused = try await issue("alice")
            let event = try await issue("alice", .event)
            let bobs = try await issue("bob")
            let all = [expired, redeemed, revoked, unused, event, bobs]
            let references = all.compactMap(\.reference)
            XCTAssertEqual(references.count, all.count, "every issuance names its reference")
            XCTAssertEqual(Set(references).count, all.count)
            let rowIDs = try await TeleTANRecord.query(on: db).all().compactMap { $0.id?.uuidString.lowercased() }
            XCTAssertEqual(Set(rowIDs), Set(references), "the reference is the row id, in lower case")

            _ = try await lifecycle.registrationToken(for: redeemed.teleTAN.value, on: db)
            let revocation = try await service.revoke(reference: revoked.reference!, issuer: alice, within: db)
            XCTAssertEqual(revocation, .revoked)
            do {
                _ = try await lifecycle.registrationToken(for: revoked.teleTAN.value, on: db)
                XCTFail("a revoked teleTAN is not redeemable")
            } catch TeleTANLifecycle.Refusal.invalidTeleTAN {}

            let unknown = UUID().uuidString.lowercased()
            let statuses = await service.statuses(of: references + [unknown, "not-a-uuid"], issuer: alice, within: db)
            XCTAssertEqual(statuses, [
                expired.reference!: .expired, redeemed.reference!: .redeemed, revoked.reference!: .revoked,
                unused.reference!: .unused, event.reference!: .unused,
            ], "bob's, unknown and malformed references are left out")
            let bobsView = await service.statuses(of: references, issuer: Issuer(username: "bob", roles: []), within: db)
            XCTAssertEqual(bobsView, [bobs.reference!: .unused])
            let upper = await service.statuses(of: [unused.reference!.uppercased()], issuer: alice, within: db)
            XCTAssertEqual(upper, [unused.reference!: .unused])
            let none = await service.statuses(of: [], issuer: alice, within: db)
            XCTAssertEqual(none, [:])

            var results: [RevocationResult] = []
            for reference in [revoked.reference!, redeemed.reference!, expired.reference!, bobs.reference!, unknown, "not-a-uuid"] {
                results.append(try await service.revoke(reference: reference, issuer: alice, within: db))
            }
            XCTAssertEqual(results, [.alreadyRevoked, .alreadyRedeemed, .expired, .notFound, .notFound, .notFound])
            let bobsStill = await service.statuses(of: [bobs.reference!], issuer: Issuer(username: "bob", roles: []), within: db)
            XCTAssertEqual(bobsStill, [bobs.reference!: .unused], "alice cannot revoke bob's")
            _ = try await lifecycle.registrationToken(for: bobs.teleTAN.value, on: db)

            // Inside a transaction that rolls back, a revocation leaves no trace.
            struct Rollback: Error {}
            do {
                try await db.transaction { tx in
                    let inside = try await service.revoke(reference: unused.reference!, issuer: alice, within: tx)
                    XCTAssertEqual(inside, .revoked)
                    throw Rollback()
                }
            } catch is Rollback {}
            let after = await service.statuses(of: [unused.reference!], issuer: alice, within: db)
            XCTAssertEqual(after, [unused.reference!: .unused])
        }
    }
}
