import AccessControl
import FluentKit
import Foundation
import HTTPTypes
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import Issuance
@testable import Portal
@testable import PortalWeb

/// EVENT teleTANs for a health authority (with and without the four-eyes rule), and "My recent
/// teleTANs" with status and revocation, on SQLite and PostgreSQL.
final class EventAndRecentTests: XCTestCase {
    static let authorities = HealthAuthorities([
        HealthAuthority(id: "1.01.0.01", name: "Gesundheitsamt Flensburg"),
        HealthAuthority(id: "9.62.0.01", name: "Gesundheitsamt München, Stadt"),
    ])

    func testAnEventOfficerIssuesForAConfiguredAuthorityOnly() async throws {
        try await PortalHarness.run(configure: { $0.healthAuthorities = Self.authorities }) { portal in
            let event = try await portal.signedIn(.event)
            let home = try await event.get("/")
            XCTAssertTrue(home.body.contains("Gesundheitsamt München, Stadt (9.62.0.01)"))
            XCTAssertFalse(home.body.contains("id=\"issue-teletan\""), "no TEST form for the event role")
            let unknown = try await event.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? "", "authority": "0.00.0.00"])
            XCTAssertEqual(unknown.status, .badRequest)
            XCTAssertTrue(unknown.body.contains("choose the requesting health authority"))
            let none = try await event.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? ""])
            XCTAssertEqual(none.status, .badRequest)
            let issued = try await event.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? "", "authority": "1.01.0.01"])
            XCTAssertEqual(issued.location, "/teletan/result")
            let result = try await event.get("/teletan/result")
            XCTAssertNotNil(TeleTAN(result.teleTAN ?? ""))
            XCTAssertTrue(result.body.contains("<dd>EVENT</dd>"))
            XCTAssertTrue(result.body.contains("Gesundheitsamt Flensburg"))
            let entry = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(entry?.outcome, "success")
            XCTAssertTrue(entry?.details.contains(#""health_authority":"1.01.0.01""#) ?? false)
            XCTAssertTrue(entry?.details.contains(#""type":"EVENT""#) ?? false)
            struct Row: Decodable { let type: String; let valid_until: Date; let created_at: Date }
            let row = try await sql(portal.db).raw("SELECT type, valid_until, created_at FROM teletans").first(decoding: Row.self)
            XCTAssertEqual(row?.type, "EVENT")
            XCTAssertEqual(row.map { $0.valid_until.timeIntervalSince($0.created_at) }, 2 * 24 * 3600, "valid 2 days")
        }
    }

    func testWithoutAuthoritiesNothingCanBeIssued() async throws {
        try await PortalHarness.run { portal in
            let event = try await portal.signedIn(.event)
            let home = try await event.get("/")
            XCTAssertTrue(home.body.contains("id=\"no-authorities\""))
            let refused = try await event.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": event.nonce(portal), "authority": "1.01.0.01"])
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertTrue(refused.body.contains("choose the requesting health authority"))
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
        }
    }

    func testFourEyesTheRequesterCannotApproveASecondPersonCan() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
        }) { portal in
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            var home = try await requester.get("/")
            XCTAssertNil(home.hidden("nonce"), "no direct issuing under the four-eyes rule")
            let direct = try await requester.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": "x", "authority": "1.01.0.01"])
            XCTAssertEqual(direct.status, .forbidden)
            let requested = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": "9.62.0.01"])
            XCTAssertEqual(requested.location, "/?event=requested")
            struct Row: Decodable { let id: UUID }
            let id = try await sql(portal.db).raw("SELECT id FROM event_requests").first(decoding: Row.self)!.id.uuidString.lowercased()
            home = try await requester.get("/")
            XCTAssertTrue(home.body.contains("Waiting for approval"))
            XCTAssertFalse(home.body.contains("/teletan/event/requests/\(id)/approve"), "one's own request is not offered for approval")
            // The requester cannot approve their own request, nor issue before approval.
            let own = try await requester.post("/teletan/event/requests/\(id)/approve", ["csrf": home.hidden("csrf") ?? ""])
            XCTAssertEqual(own.status, .forbidden)
            XCTAssertTrue(own.body.contains("cannot approve or decline your own request"))
            let earlyNonce = requester.nonce(portal)
            let early = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": earlyNonce])
            XCTAssertEqual(early.location, "/?event=not_approved")
            var created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
            // A second event officer approves.
            let approverHome = try await approver.get("/")
            XCTAssertTrue(approverHome.body.contains("/teletan/event/requests/\(id)/approve"))
            let approved = try await approver.post("/teletan/event/requests/\(id)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            XCTAssertEqual(approved.location, "/?event=approved")
            created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0, "nothing is created by the approval itself")
            // Only now the requester can issue it, once; it is shown to the requester.
            home = try await requester.get("/")
            XCTAssertTrue(home.body.contains("Approved by tt-event-2"))
            let nonce = try XCTUnwrap(home.body.firstMatch(of: /requests\/[0-9a-f-]+\/issue" class="inline" data-submit-once>\s*<input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="nonce" value="([^"]+)"/)).output.1
            let issued = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": String(nonce)])
            XCTAssertEqual(issued.location, "/teletan/result")
            let result = try await requester.get("/teletan/result")
            XCTAssertNotNil(TeleTAN(result.teleTAN ?? ""))
            XCTAssertTrue(result.body.contains("Gesundheitsamt München, Stadt"))
            let entry = try await portal.auditActions("teletan.issue").filter { $0.outcome == "success" }.last
            XCTAssertTrue(entry?.details.contains(#""approved_by":"tt-event-2""#) ?? false)
            XCTAssertEqual(entry?.actor, "tt-event")
            // Used: a second issue from the same approval is refused.
            portal.clock.advance(seconds: 31)
            let againNonce = requester.nonce(portal)
            let again = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": againNonce])
            XCTAssertEqual(again.location, "/?event=not_approved")
            created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 1)
            let given = try await portal.auditActions("event.approval.given")
            XCTAssertEqual(given.map(\.outcome), ["refused", "success"])
            XCTAssertEqual(given.map(\.actor), ["tt-event", "tt-event-2"])
            let asked = try await portal.auditActions("event.approval.requested")
            XCTAssertEqual(asked.map(\.actor), ["tt-event"])
            XCTAssertTrue(asked.first?.details.contains("9.62.0.01") ?? false)

            // A declined request can never be issued.
            home = try await requester.get("/")
            _ = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": "1.01.0.01"])
            struct Pending: Decodable { let id: UUID }
            let second = try await sql(portal.db).raw("SELECT id FROM event_requests WHERE status = 'pending'")
                .first(decoding: Pending.self)!.id.uuidString.lowercased()
            let declined = try await approver.post("/teletan/event/requests/\(second)/decline", ["csrf": approverHome.hidden("csrf") ?? ""])
            XCTAssertEqual(declined.location, "/?event=declined")
            home = try await requester.get("/")
            XCTAssertTrue(home.body.contains("Declined by tt-event-2"))
            portal.clock.advance(seconds: 31)
            let refused = try await requester.post("/teletan/event/requests/\(second)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": requester.nonce(portal)])
            XCTAssertEqual(refused.location, "/?event=not_approved")
            created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 1)
            let declinedEntries = try await portal.auditActions("event.approval.declined")
            XCTAssertEqual(declinedEntries.map(\.outcome), ["success"])
            XCTAssertEqual(declinedEntries.map(\.actor), ["tt-event-2"])
        }
    }

    func testRecentTeleTANsShowStatusAndRevokeMakesRedemptionFail() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let firstIssued = try await officer.issueTeleTAN()
            let first = try XCTUnwrap(firstIssued)
            portal.clock.advance(seconds: 31)
            let secondIssued = try await officer.issueTeleTAN()
            let second = try XCTUnwrap(secondIssued)
            // The app-facing tables live on the verification server; here the test adds them.
            try await CreateLifecycleRecords().prepare(on: portal.db)
            let lifecycle = TeleTANLifecycle(hasher: portal.portal.foundation.hasher, now: portal.clock.function)
            _ = try await lifecycle.registrationToken(for: first, on: portal.db)
            let page = try await officer.get("/teletan/recent")
            XCTAssertEqual(page.status, .ok)
            XCTAssertTrue(page.body.contains("Redeemed"))
            XCTAssertTrue(page.body.contains("Not used yet"))
            HotlineTests.assertNoTeleTAN(page, first)
            HotlineTests.assertNoTeleTAN(page, second)
            // Only the unused one can be revoked.
            let forms = page.body.matches(of: /\/teletan\/recent\/([0-9a-f-]{36})\/revoke/).map { String($0.output.1) }
            XCTAssertEqual(forms.count, 1)
            let revoked = try await officer.post("/teletan/recent/\(forms[0])/revoke", ["csrf": page.hidden("csrf") ?? ""])
            XCTAssertEqual(revoked.location, "/teletan/recent?revoked=revoked")
            let after = try await officer.get("/teletan/recent?revoked=revoked")
            XCTAssertTrue(after.body.contains("The teleTAN was revoked"))
            XCTAssertTrue(after.body.contains("status-revoked"))
            do {
                _ = try await lifecycle.registrationToken(for: second, on: portal.db)
                XCTFail("a revoked teleTAN redeems like an unknown one")
            } catch let refusal as TeleTANLifecycle.Refusal {
                XCTAssertEqual(refusal, .invalidTeleTAN)
            }
            let entry = try await portal.auditActions("teletan.revoke").last
            XCTAssertEqual(entry?.outcome, "success")
            XCTAssertEqual(entry?.subject, portal.portal.foundation.hasher.hash(second, for: .teleTANFingerprint))
            // Someone else sees none of them and cannot revoke them.
            let other = try await portal.session(username: "tt-officer-2", roles: [.officer])
            let otherPage = try await other.get("/teletan/recent")
            XCTAssertTrue(otherPage.body.contains("id=\"no-recent\""))
            let foreign = try await other.post("/teletan/recent/\(forms[0])/revoke", ["csrf": otherPage.hidden("csrf") ?? ""])
            XCTAssertEqual(foreign.status, .notFound)
            // A week later they are gone from the list.
            portal.clock.advance(seconds: 7 * 86_400 + 60)
            let later = try await portal.signedIn(.officer).get("/teletan/recent")
            XCTAssertTrue(later.body.contains("id=\"no-recent\""))
        }
    }

    func testAServiceThatCannotTellShowsUnknownAndOffersNoRevoke() async throws {
        try await PortalHarness.run(verification: StatuslessService()) { portal in
            let officer = try await portal.signedIn(.officer)
            let issued = try await officer.issueTeleTAN()
            XCTAssertNotNil(issued)
            let page = try await officer.get("/teletan/recent")
            XCTAssertTrue(page.body.contains("status-unknown"), page.body)
            XCTAssertFalse(page.body.contains("/revoke\""))
        }
    }

    /// What a teleTAN is for can still refuse it inside the issuing transaction (the call ended,
    /// the approval was used meanwhile): nothing is shown and, embedded, nothing is kept.
    func testAPurposeThatRefusesLeavesNoTeleTAN() async throws {
        try await PortalHarness.run { portal in
            let sessionHash = String(repeating: "ab", count: 32)
            let user = ActingUser(
                username: "tt-officer", role: .officer, roles: [.officer], sessionHash: sessionHash, address: nil,
                requestID: "test", logger: TestDatabases.testLogger)
            let purpose = IssuancePurpose(auditDetails: ["call": "c"], onIssued: { _, _ in throw IssuanceRefusal(reason: "call_not_open") })
            let outcome = try await portal.portal.issuance.issuer.issue(
                type: .test, by: user, nonce: portal.portal.foundation.nonces.make(sessionHash: sessionHash, now: portal.clock.now), for: purpose)
            XCTAssertEqual(outcome, .refused(reason: "call_not_open"))
            for table in ["teletans", "pending_displays", "issued_teletans"] {
                let rows = try await portal.count("SELECT COUNT(*) AS n FROM \(table)")
                XCTAssertEqual(rows, 0, table)
            }
            let entry = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(entry?.outcome, "refused")
            XCTAssertTrue(entry?.details.contains("call_not_open") ?? false)
            XCTAssertTrue(entry?.details.contains(#""call":"c""#) ?? false)
        }
    }

    func testHealthAuthoritiesFile() throws {
        let parsed = try HealthAuthorities.parse("""
            # comment
            id,name
            1.01.0.01,Gesundheitsamt Flensburg
            "9.62.0.01","Gesundheitsamt München, Stadt"

            """)
        XCTAssertEqual(parsed.all.map(\.id), ["1.01.0.01", "9.62.0.01"])
        XCTAssertEqual(parsed.find("9.62.0.01")?.name, "Gesundheitsamt München, Stadt")
        XCTAssertThrowsError(try HealthAuthorities.parse("a,b\na,c"), "duplicate id")
        XCTAssertThrowsError(try HealthAuthorities.parse("only-one-field"))
        XCTAssertThrowsError(try HealthAuthorities.parse("x y,name"), "id with a space")
        XCTAssertThrowsError(try HealthAuthorities.parse("\"open,name"))
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/health-authorities.example.csv").path
        XCTAssertEqual(try HealthAuthorities.load(path: example).all.count, 4, "the example in docs/ loads")
    }
}

/// A CWA server without the status and revoke endpoints: it gives no reference.
struct StatuslessService: VerificationService {
    var sharesDatabase: Bool { false }
    func issueTeleTAN(_ request: TeleTANRequest, within db: any Database) async throws -> IssuedTeleTAN {
        // The harness's test clock starts here.
        let now = TestClock().now
        return IssuedTeleTAN(teleTAN: .random(), type: request.type, issuedAt: now, validUntil: now.addingTimeInterval(3600))
    }
    func statuses(of references: [String], issuer: Issuer, within db: any Database) async -> [String: TeleTANStatus]? { nil }
    func revoke(reference: String, issuer: Issuer, within db: any Database) async throws -> RevocationResult {
        throw VerificationServiceError.unavailable(reason: "not offered")
    }
}

extension Browser {
    /// A fresh form nonce for this browser's session, as a page would carry.
    func nonce(_ portal: TestPortal) -> String {
        let sessionHash = portal.portal.foundation.hasher.hash(cookies[SessionMiddleware.cookieName] ?? "", for: .session)
        return portal.portal.foundation.nonces.make(sessionHash: sessionHash, now: portal.clock.now)
    }
}
