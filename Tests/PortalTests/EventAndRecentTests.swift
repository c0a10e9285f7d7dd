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
            let requested = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": "9.62.0.01", "reason": "AZ 2026-17"])
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
            XCTAssertEqual(again.location, "/?event=already_issued")
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
            _ = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": "1.01.0.01", "reason": "AZ 2026-18"])
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
            let revoked = try await officer.post("/teletan/recent/\(forms[0])/revoke", ["csrf": page.hidden("csrf") ?? "", "reason": "wrong_person"])
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
            let foreign = try await other.post("/teletan/recent/\(forms[0])/revoke", ["csrf": otherPage.hidden("csrf") ?? "", "reason": "wrong_person"])
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

    // MARK: Issue #18, item 5: "My recent teleTANs" says which is which

    func testTheResultPageShowsTheReferenceMyRecentListsItUnder() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let result = try await officer.issueResultPage()
            let page = try XCTUnwrap(result)
            let reference = try XCTUnwrap(
                page.body.firstMatch(of: /id="result-reference"[^>]*>([0-9A-F]{4}-[0-9A-F]{4})</)?.output.1, "the result page shows the reference")
            let recent = try await officer.get("/teletan/recent")
            XCTAssertTrue(recent.body.contains(">\(reference)</td>"), "My recent teleTANs lists it under the same reference")
            HotlineTests.assertNoTeleTAN(recent, page.teleTAN ?? "")
        }
    }

    func testAHotlineTeleTANsRowShowsItsCallWithStartAndOutcome() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let callID = String(call.split(separator: "/").last!)
            let issued = try await agent.submitCall(call, action: "issue", checks: HotlineTests.allChecks)
            XCTAssertEqual(issued.location, "/teletan/result")
            let result = try await agent.get("/teletan/result")
            XCTAssertNotNil(result.body.firstMatch(of: /id="result-reference"/), "the reference beside the teleTAN, for the call sheet")
            var recent = try await agent.get("/teletan/recent")
            XCTAssertTrue(recent.body.contains("href=\"/hotline/calls/\(callID)\""), "the row links to its call")
            XCTAssertTrue(recent.body.contains("Started "), "the call's start time")
            XCTAssertTrue(recent.body.contains("Still going on"), "the open call's outcome")
            // Ended: the row says how.
            _ = try await agent.post("/teletan/done", ["csrf": result.hidden("csrf") ?? "", "call": callID])
            let step = try await agent.get(call)
            _ = try await agent.post(call + "/passed-on", ["csrf": step.hidden("csrf") ?? ""])
            recent = try await agent.get("/teletan/recent")
            XCTAssertTrue(recent.body.contains("teleTAN issued"), recent.body)
            // An officer's teleTAN belongs to no call.
            let officer = try await portal.signedIn(.officer)
            _ = try await officer.issueTeleTAN()
            let own = try await officer.get("/teletan/recent")
            XCTAssertFalse(own.body.contains("/hotline/calls/"))
        }
    }

    func testRevokeAsksForConfirmationAndAReasonTheTrailRecordsWithoutTheNote() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let issued = try await officer.issueTeleTAN()
            let teleTAN = try XCTUnwrap(issued)
            let list = try await officer.get("/teletan/recent")
            let id = try XCTUnwrap(list.body.firstMatch(of: /\/teletan\/recent\/([0-9a-f-]{36})\/revoke/)?.output.1)
            XCTAssertTrue(list.body.contains(#"<form method="get" action="/teletan/recent/\#(id)/revoke""#),
                          "Revoke leads to a confirmation step (a page, so it works without JavaScript)")
            let confirm = try await officer.get("/teletan/recent/\(id)/revoke")
            XCTAssertEqual(confirm.status, .ok)
            XCTAssertTrue(confirm.body.contains("id=\"confirm-revoke\""))
            XCTAssertTrue(confirm.body.contains("value=\"wrong_person\""))
            XCTAssertTrue(confirm.body.contains("No personal data"))
            var revoked = try await portal.count("SELECT COUNT(*) AS n FROM issued_teletans WHERE revoked_at IS NOT NULL")
            XCTAssertEqual(revoked, 0, "showing the question revokes nothing")
            // No reason: refused, the note kept.
            let noReason = try await officer.post("/teletan/recent/\(id)/revoke", ["csrf": confirm.hidden("csrf") ?? "", "note": "Anruf 14:02"])
            XCTAssertEqual(noReason.status, .badRequest)
            XCTAssertTrue(noReason.body.contains("Please choose a reason"))
            XCTAssertTrue(noReason.body.contains("value=\"Anruf 14:02\""))
            // A control character or a long note: refused, the choice kept.
            let control = try await officer.post(
                "/teletan/recent/\(id)/revoke", ["csrf": confirm.hidden("csrf") ?? "", "reason": "other", "note": "Zeile\neins"])
            XCTAssertEqual(control.status, .badRequest)
            XCTAssertTrue(control.body.contains("control character"))
            XCTAssertTrue(control.body.contains(#"value="other" checked"#))
            let long = try await officer.post(
                "/teletan/recent/\(id)/revoke", ["csrf": confirm.hidden("csrf") ?? "", "reason": "other", "note": String(repeating: "x", count: 81)])
            XCTAssertEqual(long.status, .badRequest)
            XCTAssertTrue(long.body.contains("at most 80 characters"))
            revoked = try await portal.count("SELECT COUNT(*) AS n FROM issued_teletans WHERE revoked_at IS NOT NULL")
            XCTAssertEqual(revoked, 0)
            let noEntries = try await portal.auditActions("teletan.revoke")
            XCTAssertTrue(noEntries.isEmpty)
            // Confirmed with a reason and a note.
            let done = try await officer.post(
                "/teletan/recent/\(id)/revoke", ["csrf": confirm.hidden("csrf") ?? "", "reason": "wrong_person", "note": "Vorgang 4711"])
            XCTAssertEqual(done.location, "/teletan/recent?revoked=revoked")
            let entry = try await portal.auditActions("teletan.revoke").last
            XCTAssertEqual(entry?.outcome, "success")
            XCTAssertTrue(entry?.details.contains(#""reason":"wrong_person""#) ?? false, entry?.details ?? "")
            XCTAssertFalse(entry?.details.contains("4711") ?? true, "the free-text note stays out of the append-only trail")
            let after = try await officer.get("/teletan/recent")
            XCTAssertTrue(after.body.contains("Read to the wrong person: Vorgang 4711"), "the row says why")
            HotlineTests.assertNoTeleTAN(after, teleTAN)
        }
    }

    // MARK: Issue #18, item 8: event officers (four-eyes)

    func testAnEventRequestCarriesAReasonTheApproverSeesAndTheTrailDoesNot() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
        }) { portal in
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            let home = try await requester.get("/")
            XCTAssertTrue(home.body.contains("id=\"event-reason\""))
            XCTAssertTrue(home.body.contains("No personal data"), "the form says not to enter personal data")
            let csrf = home.hidden("csrf") ?? ""
            for (reason, message) in [("", "Please give a reason"), ("  ", "Please give a reason"), ("AZ\t17", "control character"),
                                      ("AZ\u{202E}71", "control character"), (String(repeating: "7", count: 81), "at most 80 characters")] {
                let refused = try await requester.post("/teletan/event/requests", ["csrf": csrf, "authority": "9.62.0.01", "reason": reason])
                XCTAssertEqual(refused.status, .badRequest, reason)
                XCTAssertTrue(refused.body.contains(message), reason)
                XCTAssertTrue(refused.body.contains(#"<option value="9.62.0.01" selected>"#), "the authority stays chosen")
            }
            let kept = try await requester.post("/teletan/event/requests", ["csrf": csrf, "authority": "1.01.0.01", "reason": "AZ\n17"])
            XCTAssertTrue(kept.body.contains("value=\"AZ&#10;17\"") || kept.body.contains("value=\"AZ\n17\""), "what was typed is kept")
            var created = try await portal.count("SELECT COUNT(*) AS n FROM event_requests")
            XCTAssertEqual(created, 0)
            let requested = try await requester.post("/teletan/event/requests", ["csrf": csrf, "authority": "9.62.0.01", "reason": "  AZ 53-2026/117  "])
            XCTAssertEqual(requested.location, "/?event=requested")
            created = try await portal.count("SELECT COUNT(*) AS n FROM event_requests")
            XCTAssertEqual(created, 1)
            let approverHome = try await approver.get("/")
            XCTAssertTrue(approverHome.body.contains(#"<td class="request-reason">AZ 53-2026/117</td>"#), "the approver sees the reason")
            let own = try await requester.get("/")
            XCTAssertTrue(own.body.contains("AZ 53-2026/117"), "so does the requester")
            let entry = try await portal.auditActions("event.approval.requested").last
            XCTAssertFalse(entry?.details.contains("117") ?? true, "free text stays out of the append-only trail")
        }
    }

    func testTheRequesterWithdrawsARequestWhichCanThenNeitherBeApprovedNorIssued() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
        }) { portal in
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            let id = try await Self.requestEventTeleTAN(requester, authority: "9.62.0.01", reason: "AZ 1", on: portal)
            var home = try await requester.get("/")
            home = try await requester.get("/")
            XCTAssertTrue(home.body.contains("/teletan/event/requests/\(id)/withdraw"), "a Withdraw button on one's own request")
            // Someone else cannot withdraw it.
            let approverHome = try await approver.get("/")
            XCTAssertFalse(approverHome.body.contains("/withdraw"))
            let foreign = try await approver.post("/teletan/event/requests/\(id)/withdraw", ["csrf": approverHome.hidden("csrf") ?? ""])
            XCTAssertEqual(foreign.location, "/?event=not_pending")
            let withdrawn = try await requester.post("/teletan/event/requests/\(id)/withdraw", ["csrf": home.hidden("csrf") ?? ""])
            XCTAssertEqual(withdrawn.location, "/?event=withdrawn")
            home = try await requester.get("/?event=withdrawn")
            XCTAssertTrue(home.body.contains("Your request was withdrawn"))
            XCTAssertTrue(home.body.contains(">Withdrawn<"))
            let approved = try await approver.post("/teletan/event/requests/\(id)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            XCTAssertEqual(approved.location, "/?event=not_pending")
            let issued = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": requester.nonce(portal)])
            XCTAssertEqual(issued.location, "/?event=not_approved")
            let teleTANs = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(teleTANs, 0)
            let entries = try await portal.auditActions("event.approval.withdrawn")
            XCTAssertEqual(entries.map(\.outcome), ["refused", "success"])
            XCTAssertEqual(entries.map(\.actor), ["tt-event-2", "tt-event"])
            // An approved request, not issued yet, can be withdrawn too.
            let second = try await Self.requestEventTeleTAN(requester, authority: "1.01.0.01", reason: "AZ 2", on: portal)
            _ = try await approver.post("/teletan/event/requests/\(second)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            let again = try await requester.post("/teletan/event/requests/\(second)/withdraw", ["csrf": home.hidden("csrf") ?? ""])
            XCTAssertEqual(again.location, "/?event=withdrawn")
        }
    }

    func testEveryEventOfficersStartPageCountsWaitingRequestsAndTellsTheRequesterOfTheApproval() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
        }) { portal in
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            let third = try await portal.session(username: "tt-event-3", roles: [.event])
            var approverHome = try await approver.get("/")
            XCTAssertTrue(approverHome.body.contains("No request waits for your approval."))
            let home = try await requester.get("/")
            for reason in ["AZ 1", "AZ 2"] {
                _ = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": "9.62.0.01", "reason": reason])
            }
            approverHome = try await approver.get("/")
            XCTAssertTrue(approverHome.body.contains("2 requests wait for your approval."), approverHome.body)
            let thirdHome = try await third.get("/")
            XCTAssertTrue(thirdHome.body.contains("2 requests wait for your approval."))
            var own = try await requester.get("/")
            XCTAssertTrue(own.body.contains("No request waits for your approval."), "one's own requests are not counted")
            XCTAssertFalse(own.body.contains("own-approved"))
            struct Row: Decodable { let id: UUID }
            let id = try await sql(portal.db).raw("SELECT id FROM event_requests ORDER BY requested_at").first(decoding: Row.self)!.id
                .uuidString.lowercased()
            _ = try await approver.post("/teletan/event/requests/\(id)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            approverHome = try await approver.get("/")
            XCTAssertTrue(approverHome.body.contains("1 request waits for your approval."))
            own = try await requester.get("/")
            XCTAssertTrue(own.body.contains("Your request for Gesundheitsamt München, Stadt (9.62.0.01) was approved by tt-event-2."), own.body)
            // The summary comes first on the page, before the forms.
            let summary = try XCTUnwrap(own.body.range(of: "id=\"event-summary\""))
            let section = try XCTUnwrap(own.body.range(of: "id=\"event-section\""))
            XCTAssertLessThan(summary.lowerBound, section.lowerBound)
        }
    }

    func testADoubleSubmittedIssueSaysTheTeleTANWasAlreadyIssued() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
        }) { portal in
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            let id = try await Self.requestEventTeleTAN(requester, authority: "9.62.0.01", reason: "AZ 9", on: portal)
            var home = try await requester.get("/")
            let approverHome = try await approver.get("/")
            _ = try await approver.post("/teletan/event/requests/\(id)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            home = try await requester.get("/")
            let nonce = try XCTUnwrap(home.body.firstMatch(of: /requests\/[0-9a-f-]+\/issue" class="inline" data-submit-once>\s*<input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="nonce" value="([^"]+)"/)).output.1
            let form = ["csrf": home.hidden("csrf") ?? "", "nonce": String(nonce)]
            let first = try await requester.post("/teletan/event/requests/\(id)/issue", form)
            XCTAssertEqual(first.location, "/teletan/result")
            // Submitted again before the result page was seen: the result page shows it (once).
            let early = try await requester.post("/teletan/event/requests/\(id)/issue", form)
            XCTAssertEqual(early.location, "/teletan/result")
            let result = try await requester.get("/teletan/result")
            XCTAssertNotNil(TeleTAN(result.teleTAN ?? ""))
            // Submitted again after it was shown (Back and submit, a replay): "already issued".
            let again = try await requester.post("/teletan/event/requests/\(id)/issue", form)
            XCTAssertEqual(again.location, "/?event=already_issued")
            let page = try await requester.get(again.location ?? "/")
            XCTAssertTrue(page.body.contains("was already issued"), page.body)
            portal.clock.advance(seconds: 31)
            let fresh = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": requester.nonce(portal)])
            XCTAssertEqual(fresh.location, "/?event=already_issued")
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 1)
        }
    }

    /// Migration 003 adds its columns to tables that hold rows already (an upgrade), on both
    /// databases: the rows stay, with no reason and no call.
    func testTheReasonsMigrationUpgradesTablesWithRows() async throws {
        try await TestDatabases.forEach { location in
            let before = PortalApp.migrations.filter { $0.name != "Issuance.AddReasonsAndCalls" }
            XCTAssertEqual(before.count, PortalApp.migrations.count - 1, "the migration is named Issuance.AddReasonsAndCalls")
            var database = try await PortalDatabase.openMigrated(location: location, migrations: before, logger: TestDatabases.testLogger)
            let id = UUID()
            do {
                let db = database.database(logger: TestDatabases.testLogger)
                try await sql(db).raw("""
                    INSERT INTO event_requests (id, requested_by, health_authority, requested_at, status, decided_by, decided_at)
                    VALUES (\(bind: id), 'tt-event', '1.01.0.01', \(bind: Date()), 'pending', NULL, NULL)
                    """).run()
                try await sql(db).raw("""
                    INSERT INTO issued_teletans (id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at)
                    VALUES (\(bind: id), 'tt-officer', 'f', 'TEST', NULL, \(bind: Date()), \(bind: Date()), NULL, NULL)
                    """).run()
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
            database = try await PortalDatabase.openMigrated(location: location, migrations: PortalApp.migrations, logger: TestDatabases.testLogger)
            do {
                let db = database.database(logger: TestDatabases.testLogger)
                struct Request: Decodable { let requested_by: String; let reason: String? }
                let request = try await sql(db).raw("SELECT requested_by, reason FROM event_requests WHERE id = \(bind: id)").first(decoding: Request.self)
                XCTAssertEqual(request?.requested_by, "tt-event")
                XCTAssertNil(request?.reason)
                struct Issued: Decodable { let fingerprint: String; let call_id: String?; let revoke_reason: String?; let revoke_note: String? }
                let row = try await sql(db).raw("SELECT fingerprint, call_id, revoke_reason, revoke_note FROM issued_teletans WHERE id = \(bind: id)")
                    .first(decoding: Issued.self)
                XCTAssertEqual(row?.fingerprint, "f")
                XCTAssertNil(row?.call_id)
                XCTAssertNil(row?.revoke_reason)
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
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

extension EventAndRecentTests {
    /// Requests an EVENT teleTAN (four-eyes rule) as `requester`; the request's id.
    static func requestEventTeleTAN(_ requester: Browser, authority: String, reason: String, on portal: TestPortal) async throws -> String {
        let home = try await requester.get("/")
        let requested = try await requester.post("/teletan/event/requests", ["csrf": home.hidden("csrf") ?? "", "authority": authority, "reason": reason])
        XCTAssertEqual(requested.location, "/?event=requested")
        struct Row: Decodable { let id: UUID }
        let row = try await sql(portal.db).raw("SELECT id FROM event_requests WHERE status = 'pending' ORDER BY requested_at DESC").first(decoding: Row.self)
        return try XCTUnwrap(row).id.uuidString.lowercased()
    }
}
