import AccessControl
import FluentKit
import Foundation
import HTTPTypes
import Hummingbird
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import Hotline
import PortalWeb
@testable import Portal

/// The hotline call through HTTP, on SQLite and PostgreSQL: checks enforced on the server,
/// callbacks taken once, contact data deleted, read-back, and who may do what.
final class HotlineTests: XCTestCase {
    static let allChecks = HotlineChecks.standard.all.map(\.id)

    func testACallWithEveryCheckIssuesATeleTANLinkedToTheCall() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let page = try await agent.get(call)
            XCTAssertEqual(page.status, .ok)
            XCTAssertTrue(page.body.contains("Positive PCR test result from a laboratory"), "the shipped checks")
            XCTAssertTrue(page.body.contains("Have you received a positive PCR test result"), "what to say")
            let issued = try await agent.submitCall(call, action: "issue", checks: Self.allChecks)
            XCTAssertEqual(issued.status, .seeOther)
            XCTAssertEqual(issued.location, "/teletan/result")
            let result = try await agent.get("/teletan/result")
            let teleTAN = try XCTUnwrap(result.teleTAN)
            XCTAssertNotNil(TeleTAN(teleTAN), "a teleTAN the app accepts")
            XCTAssertTrue(result.body.contains("id=\"continue-call\""), "the result page leads on to the read-back")
            let callID = String(call.split(separator: "/").last!)
            XCTAssertEqual(result.hidden("call"), callID)
            // The call record holds the keyed fingerprint, the issuance entry names the call.
            let fingerprint = portal.portal.foundation.hasher.hash(teleTAN, for: .teleTANFingerprint)
            let row = try await Calls().find(UUID(uuidString: callID)!, on: portal.db)
            XCTAssertEqual(row?.teletan_fingerprint, fingerprint)
            XCTAssertEqual(row?.answers, Set(Self.allChecks))
            let issue = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(issue?.subject, fingerprint)
            XCTAssertTrue(issue?.details.contains(#""call":"\#(callID)""#) ?? false)
            let answers = try await portal.auditActions("hotline.call.checks").last
            XCTAssertTrue(answers?.details.contains("positive_pcr=yes") ?? false)
            // Continue: the read-back step, then "I have passed it on" ends the call.
            let next = try await agent.post("/teletan/done", ["csrf": result.hidden("csrf") ?? "", "call": callID])
            XCTAssertEqual(next.location, call)
            let readBackStep = try await agent.get(call)
            XCTAssertTrue(readBackStep.body.contains("id=\"check-read-back\""))
            let ended = try await agent.post(call + "/passed-on", ["csrf": readBackStep.hidden("csrf") ?? ""])
            XCTAssertEqual(ended.location, "/hotline?done=passed_on")
            let summary = try await agent.get(call)
            XCTAssertTrue(summary.body.contains("This call has ended: teleTAN issued"), summary.body)
            let end = try await portal.auditActions("hotline.call.ended").last
            XCTAssertTrue(end?.details.contains(#""outcome":"teletan_issued""#) ?? false)
            XCTAssertTrue(end?.details.contains("duration_seconds") ?? false)
        }
    }

    func testTheServerRefusesIssuanceWithARequiredCheckUnanswered() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let ticked = Array(Self.allChecks.dropLast())
            let refused = try await agent.submitCall(call, action: "issue", checks: ticked)
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertTrue(refused.body.contains("every required check is ticked"))
            for id in ticked { XCTAssertTrue(refused.body.contains("id=\"check-\(id)\" checked"), "the ticks stay: \(id)") }
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
            let refusal = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(refusal?.outcome, "refused")
            XCTAssertTrue(refusal?.details.contains("required_check_missing") ?? false)
        }
    }

    /// The rule is the hotline domain's, not the call page's: whatever path issues for a call
    /// goes through ``CallIssuance``, which refuses (and audits) a missing required check before
    /// the form's nonce is used.
    func testCallIssuanceRefusesAMissingRequiredCheckWithoutHTTP() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let path = try await agent.startCall()
            let id = try XCTUnwrap(path.split(separator: "/").last.flatMap { UUID(uuidString: String($0)) })
            let found = try await Calls().find(id, on: portal.db)
            let call = try XCTUnwrap(found)
            let acting = ActingUser(
                username: Account.hotline.rawValue, role: .hotline, roles: [.hotline], sessionHash: "call-session",
                address: "203.0.113.9", requestID: "call-1", logger: TestDatabases.testLogger)
            let nonces = portal.portal.foundation.nonces
            let made = nonces.make(sessionHash: acting.sessionHash, now: portal.clock.now)
            let nonce = FormNonce(made, checkedWith: nonces, sessionHash: acting.sessionHash, now: portal.clock.now)
            let issuing = portal.portal.hotline.calls.issuing
            let required = HotlineChecks.standard.requiredIDs
            let refused = try await issuing.issue(
                in: call, ticked: Set(required.dropFirst()), by: acting, nonce: nonce, at: portal.clock.now, on: portal.db)
            XCTAssertEqual(refused, .checksMissing([required[0]]))
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
            let refusal = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(refusal?.outcome, "refused")
            XCTAssertEqual(refusal?.detailValues["reason"], "required_check_missing")
            XCTAssertEqual(refusal?.detailValues["missing"], required[0])
            // The nonce was not used up: with every required check the same form issues.
            let issued = try await issuing.issue(
                in: call, ticked: Set(required), by: acting, nonce: nonce, at: portal.clock.now, on: portal.db)
            XCTAssertEqual(issued, .issuer(.issued(type: .test)))
        }
    }

    func testAForgedCallAndAnotherAgentsCallAreRefused() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let other = try await portal.session(username: "tt-hotline-2", roles: [.hotline])
            let call = try await agent.startCall()
            let forged = "/hotline/calls/\(UUID().uuidString.lowercased())"
            let home = try await other.get("/hotline")
            for path in [forged, "/hotline/calls/not-a-uuid", call] {
                let page = try await other.postPairs(path + "/issue", [("csrf", home.hidden("csrf") ?? ""), ("nonce", "x")] + Self.allChecks.map { ("checks[]", $0) })
                XCTAssertEqual(page.status, .notFound, path)
                let viewed = try await other.get(path)
                XCTAssertEqual(viewed.status, .notFound, path)
            }
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
        }
    }

    func testCallbackQueueTakeNoAnswerReachedAndContactDataDeleted() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            // A bad number: a clear message, and the name stays in the form.
            let bad = try await agent.submitCall(call, action: "callback", checks: ["positive_pcr"], phone: "12ab", name: "Erika Mustermann")
            XCTAssertEqual(bad.status, .badRequest)
            XCTAssertTrue(bad.body.contains("Please enter a phone number"))
            XCTAssertTrue(bad.body.contains("value=\"Erika Mustermann\""))
            XCTAssertTrue(bad.body.contains("value=\"12ab\""))
            XCTAssertTrue(bad.body.contains("id=\"check-positive_pcr\" checked"))
            let queued = try await agent.submitCall(call, action: "callback", checks: ["positive_pcr"], phone: "030 1234 5678", name: "Erika Mustermann")
            XCTAssertEqual(queued.location, "/hotline?done=callback_queued")
            // Stored sealed: neither the number nor the name in any text column of the callback, and
            // only their keyed fingerprints in the audit entry.
            let plain = try await portal.count("""
                SELECT COUNT(*) AS n FROM hotline_callbacks
                WHERE COALESCE(sealed_contact, '') || COALESCE(phone_fingerprint, '') || status LIKE '%Erika%'
                   OR COALESCE(sealed_contact, '') || COALESCE(phone_fingerprint, '') || status LIKE '%12345678%'
                """)
            XCTAssertEqual(plain, 0)
            let queuedEntries = try await portal.auditActions("hotline.callback.queued")
            let queueEntry = try XCTUnwrap(queuedEntries.last)
            Self.assertNoNumber(queueEntry.details, "030 1234 5678")
            XCTAssertFalse(queueEntry.details.contains("Erika"))
            let vault = ContactVault(hasher: portal.portal.foundation.hasher)
            XCTAssertTrue(queueEntry.details.contains(vault.fingerprint(of: PhoneNumber("030 1234 5678")!)), "the number's keyed fingerprint")
            XCTAssertTrue(queueEntry.details.contains(vault.fingerprint(ofName: "Erika Mustermann")), "the name's keyed fingerprint")

            // The queue masks the number.
            let queue = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(queue.body.contains("+49 ••• ••• •• 78"), queue.body)
            Self.assertNoNumber(queue.body, "030 1234 5678")
            let id = try XCTUnwrap(queue.body.firstMatch(of: /\/hotline\/callbacks\/([0-9a-f-]{36})\/take/)).output.1
            let taken = try await agent.post("/hotline/callbacks/\(id)/take", ["csrf": queue.hidden("csrf") ?? ""])
            XCTAssertEqual(taken.location, "/hotline/callbacks/\(id)")
            let entry = try await agent.get("/hotline/callbacks/\(id)")
            XCTAssertTrue(entry.body.contains("+49 30 12345678"), entry.body)
            XCTAssertTrue(entry.body.contains("Erika Mustermann"))
            // No answer: back in the queue with one attempt.
            let noAnswer = try await agent.post("/hotline/callbacks/\(id)/outcome", ["csrf": entry.hidden("csrf") ?? "", "outcome": "no_answer"])
            XCTAssertEqual(noAnswer.location, "/hotline/callbacks?notice=no_answer")
            let again = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(again.body.contains("1 of 3"))
            _ = try await agent.post("/hotline/callbacks/\(id)/take", ["csrf": again.hidden("csrf") ?? ""])
            let reached = try await agent.post("/hotline/callbacks/\(id)/outcome", ["csrf": again.hidden("csrf") ?? "", "outcome": "reached"])
            let newCall = try XCTUnwrap(reached.location)
            XCTAssertTrue(newCall.hasPrefix("/hotline/calls/"))
            // Reached: the callback is closed, but keeps number and name (sealed) for the call that
            // continues, until that call ends (a dropped line can be called again).
            let kept = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE sealed_contact IS NOT NULL")
            XCTAssertEqual(kept, 1)
            let fingerprints = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE phone_fingerprint IS NOT NULL")
            XCTAssertEqual(fingerprints, 0, "not waiting any more: the number may be queued again")
            let closed = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(closed.body.contains("Reached"))
            XCTAssertFalse(closed.body.contains("••• 78"))
            // The new call carries the first call's answers; issuing in it records the number's
            // fingerprint for repeat-caller warnings.
            let callPage = try await agent.get(newCall)
            XCTAssertTrue(callPage.body.contains("id=\"check-positive_pcr\" checked"))
            let issued = try await agent.submitCall(newCall, action: "issue", checks: Self.allChecks)
            XCTAssertEqual(issued.location, "/teletan/result")
            let history = try await portal.count("SELECT COUNT(*) AS n FROM hotline_number_history")
            XCTAssertEqual(history, 1)
            // The call ends: the callback's contact data goes with it.
            let readBack = try await agent.get(newCall)
            _ = try await agent.post(newCall + "/passed-on", ["csrf": readBack.hidden("csrf") ?? ""])
            let left = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE sealed_contact IS NOT NULL OR phone_fingerprint IS NOT NULL")
            XCTAssertEqual(left, 0)

            // The same number calls again: the queue and the callback warn.
            portal.clock.advance(seconds: 3 * 86_400 + 60)
            let second = try await portal.signedIn(.hotline)
            let secondCall = try await second.startCall()
            _ = try await second.submitCall(secondCall, action: "callback", checks: [], phone: "+49 30 12345678", name: "E. M.")
            let warned = try await second.get("/hotline/callbacks")
            XCTAssertTrue(warned.body.contains("this number received a teleTAN 3 days ago"), warned.body)
            let audit = try await portal.auditActions("hotline.callback.queued").last
            XCTAssertTrue(audit?.details.contains(#""repeat_caller":"yes""#) ?? false)
        }
    }

    func testWrongNumberAndRefusedEndTheCallbackAndDeleteItsContact() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            for (outcome, notice) in [("wrong_number", "Wrong number"), ("refused", "Refused")] {
                let id = try await agent.queueCallback(phone: "+49 221 9876543", name: "Ende \(outcome)")
                let queue = try await agent.get("/hotline/callbacks")
                _ = try await agent.post("/hotline/callbacks/\(id)/take", ["csrf": queue.hidden("csrf") ?? ""])
                let closed = try await agent.post("/hotline/callbacks/\(id)/outcome", ["csrf": queue.hidden("csrf") ?? "", "outcome": outcome])
                XCTAssertEqual(closed.location, "/hotline/callbacks?notice=\(outcome)")
                let row = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
                XCTAssertEqual(row?.outcome, outcome)
                XCTAssertNil(row?.sealed_contact, outcome)
                XCTAssertNil(row?.phone_fingerprint, outcome)
                let after = try await agent.get("/hotline/callbacks?notice=\(outcome)")
                XCTAssertTrue(after.body.contains(notice))
                Self.assertNoNumber(after.body, "+49 221 9876543")
            }
            let attempts = try await portal.auditActions("hotline.callback.attempt")
            XCTAssertEqual(attempts.map(\.outcome), ["success", "success"])
            XCTAssertTrue(attempts.allSatisfy { $0.actor == "tt-hotline" && $0.subject?.hasPrefix("callback:") == true })
        }
    }

    /// A check the file marks as not required may stay unticked; its answer is still recorded.
    func testAnOptionalCheckDoesNotBlockIssuance() async throws {
        let checks = HotlineChecks([
            HotlineCheck(id: "positive_pcr", labelDE: "PCR positiv", labelEN: "PCR positive", required: true),
            HotlineCheck(id: "symptoms", labelDE: "Symptome", labelEN: "Symptoms", required: false),
        ])
        try await PortalHarness.run(configure: { $0.hotlineChecks = checks }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let page = try await agent.get(call)
            XCTAssertTrue(page.body.contains("id=\"check-symptoms\""))
            XCTAssertFalse(page.body.contains("check-speaks_for_self"), "the configured checks replace the shipped ones")
            let issued = try await agent.submitCall(call, action: "issue", checks: ["positive_pcr"])
            XCTAssertEqual(issued.location, "/teletan/result")
            let answers = try await portal.auditActions("hotline.call.checks").last
            XCTAssertTrue(answers?.details.contains("positive_pcr=yes,symptoms=no") ?? false, answers?.details ?? "")
            let started = try await portal.auditActions("hotline.call.started")
            XCTAssertEqual(started.map(\.actor), ["tt-hotline"])
        }
    }

    func testTheRepeatCallerFingerprintIsGoneAfterFourteenDays() async throws {
        try await PortalHarness.run { portal in
            let history = portal.portal.hotline.history
            let fingerprint = String(repeating: "f", count: 64)
            try await history.record(fingerprint, at: portal.clock.now, on: portal.db)
            portal.clock.advance(seconds: 14 * 86_400 - 60)
            try await portal.portal.runCleanup()
            let kept = try await history.lastTeleTAN(for: [fingerprint], now: portal.clock.now, on: portal.db)
            XCTAssertNotNil(kept, "still within 14 days")
            portal.clock.advance(seconds: 120)
            try await portal.portal.runCleanup()
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM hotline_number_history")
            XCTAssertEqual(rows, 0)
        }
    }

    func testThreeUnansweredAttemptsCloseTheCallbackAsUnreachable() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let id = try await agent.queueCallback(phone: "0221 7946 0958", name: "Jane Doe")
            for attempt in 1...3 {
                let queue = try await agent.get("/hotline/callbacks")
                _ = try await agent.post("/hotline/callbacks/\(id)/take", ["csrf": queue.hidden("csrf") ?? ""])
                let result = try await agent.post("/hotline/callbacks/\(id)/outcome", ["csrf": queue.hidden("csrf") ?? "", "outcome": "no_answer"])
                XCTAssertEqual(result.location, attempt < 3 ? "/hotline/callbacks?notice=no_answer" : "/hotline/callbacks?notice=unreachable")
            }
            let row = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
            XCTAssertEqual(row?.outcome, "unreachable")
            XCTAssertNil(row?.sealed_contact)
            XCTAssertEqual(row?.attempts, 3)
        }
    }

    func testACallbackTakenBySomeoneElseIsRefused() async throws {
        try await PortalHarness.run { portal in
            let first = try await portal.signedIn(.hotline)
            let second = try await portal.session(username: "tt-hotline-2", roles: [.hotline])
            let id = try await first.queueCallback(phone: "0171 2345678", name: "Max")
            let csrf1 = try await first.get("/hotline/callbacks").hidden("csrf") ?? ""
            let csrf2 = try await second.get("/hotline/callbacks").hidden("csrf") ?? ""
            _ = try await first.post("/hotline/callbacks/\(id)/take", ["csrf": csrf1])
            let refused = try await second.post("/hotline/callbacks/\(id)/take", ["csrf": csrf2])
            XCTAssertEqual(refused.status, .conflict)
            XCTAssertTrue(refused.body.contains("Another agent has just taken this callback"))
            let peek = try await second.get("/hotline/callbacks/\(id)")
            XCTAssertEqual(peek.status, .conflict)
            Self.assertNoNumber(peek.body, "0171 2345678")
            let outcome = try await second.post("/hotline/callbacks/\(id)/outcome", ["csrf": csrf2, "outcome": "refused"])
            XCTAssertEqual(outcome.location, "/hotline/callbacks?notice=not_taken")
            let stillWaiting = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
            XCTAssertEqual(stillWaiting?.status, "waiting")
            // Left for the take timeout, it can be taken by the other agent (whose session stays
            // alive meanwhile).
            portal.clock.advance(seconds: 10 * 60)
            _ = try await second.get("/hotline/callbacks")
            portal.clock.advance(seconds: 5 * 60 + 1)
            let later = try await second.post("/hotline/callbacks/\(id)/take", ["csrf": csrf2])
            XCTAssertEqual(later.location, "/hotline/callbacks/\(id)")
        }
    }

    func testTwoAgentsTakingOneCallbackAtOnceOneGetsIt() async throws {
        try await PortalHarness.run { portal in
            let owner = try await portal.signedIn(.hotline)
            let id = try await owner.queueCallback(phone: "+49 89 1234567", name: "Race")
            var agents: [(Browser, String)] = []
            for index in 0..<6 {
                let browser = try await portal.session(username: "agent-\(index)", roles: [.hotline])
                agents.append((browser, try await browser.get("/hotline/callbacks").hidden("csrf") ?? ""))
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (browser, csrf) in agents {
                    group.addTask { try await browser.post("/hotline/callbacks/\(id)/take", ["csrf": csrf]).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0 == .seeOther }.count, 1, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .conflict }.count, 5, "\(statuses)")
            let takes = try await portal.auditActions("hotline.callback.taken")
            XCTAssertEqual(takes.filter { $0.outcome == "success" }.count, 1)
        }
    }

    func testContactDataIsDeletedAfterTheRetentionTime() async throws {
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(3600) }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let id = try await agent.queueCallback(phone: "+49 40 9876543", name: "Late Caller")
            portal.clock.advance(seconds: 3599)
            try await portal.portal.runCleanup()
            let kept = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE sealed_contact IS NOT NULL")
            XCTAssertEqual(kept, 1, "not before the retention time")
            portal.clock.advance(seconds: 2)
            try await portal.portal.runCleanup()
            let row = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
            XCTAssertNil(row?.sealed_contact)
            XCTAssertNil(row?.phone_fingerprint)
            XCTAssertEqual(row?.outcome, "expired")
            let queue = try await portal.signedIn(.hotline).get("/hotline/callbacks")
            XCTAssertTrue(queue.body.contains("expired"), queue.body)
            XCTAssertFalse(queue.body.contains("••• 43"))
            let expired = try await portal.auditActions("hotline.callback.expired")
            XCTAssertEqual(expired.map(\.subject), ["callback:\(id)"])
        }
    }

    func testReadBackRightAndWrongWithoutStoringWhatWasTyped() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            _ = try await agent.submitCall(call, action: "issue", checks: Self.allChecks)
            let resultPage = try await agent.get("/teletan/result")
            let teleTAN = try XCTUnwrap(resultPage.teleTAN)
            let page = try await agent.get(call)
            let csrf = page.hidden("csrf") ?? ""
            // One character misheard: the position, what was heard and what it is.
            var chars = Array(teleTAN)
            let wrongChar = TeleTAN.alphabet.first { $0 != chars[3] }!
            chars[3] = wrongChar
            let typed = String(chars)
            let wrong = try await agent.readBack(call, csrf: csrf, typed.lowercased())
            XCTAssertEqual(wrong.status, .ok)
            XCTAssertTrue(wrong.body.contains("Does not match: read it again"), wrong.body)
            XCTAssertTrue(wrong.body.contains("Position 4: heard \(wrongChar)"), wrong.body)
            XCTAssertTrue(wrong.body.contains("it is \(Array(teleTAN)[3])"), wrong.body)
            Self.assertNoTeleTAN(wrong, teleTAN)
            XCTAssertTrue(wrong.body.contains("Read-backs left: 4"))
            // Far off: no positions.
            let far = try await agent.readBack(call, csrf: csrf, "XYZ")  // not hex: the audit trail is full of hex
            XCTAssertTrue(far.body.contains("too far off"))
            // Right, typed in groups with spaces.
            let groups = TeleTAN(teleTAN)!.groups.joined(separator: " ")
            let right = try await agent.readBack(call, csrf: csrf, groups)
            XCTAssertTrue(right.body.contains("Matches: the caller has the right teleTAN."), right.body)
            XCTAssertFalse(right.body.contains("id=\"check-read-back\""), "nothing more to check")
            // The result is shown once; the match stays.
            let again = try await agent.get(call)
            XCTAssertFalse(again.body.contains("Does not match"))
            XCTAssertTrue(again.body.contains("Matches"))
            let sealedLeft = try await portal.count("SELECT COUNT(*) AS n FROM hotline_calls WHERE readback_sealed IS NOT NULL")
            XCTAssertEqual(sealedLeft, 0)
            let entries = try await portal.auditActions("hotline.readback")
            XCTAssertEqual(entries.map(\.outcome), ["failure", "failure", "success"])
            // Nothing typed is stored, in any form it was posted (nor the teleTAN itself).
            for posted in [typed.lowercased(), "XYZ", groups, teleTAN] {
                let stored = try await portal.count("""
                    SELECT COUNT(*) AS n FROM audit_log
                    WHERE LOWER(details || COALESCE(subject, '')) LIKE LOWER('%\(posted)%')
                    """)
                XCTAssertEqual(stored, 0, "audit: \(posted)")
                let inCalls = try await portal.count("""
                    SELECT COUNT(*) AS n FROM hotline_calls
                    WHERE LOWER(checks || COALESCE(readback_result, '') || COALESCE(readback_sealed, '')) LIKE LOWER('%\(posted)%')
                    """)
                XCTAssertEqual(inCalls, 0, "calls: \(posted)")
            }
        }
    }

    func testReadBacksAreLimitedPerCall() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            _ = try await agent.submitCall(call, action: "issue", checks: Self.allChecks)
            let resultPage = try await agent.get("/teletan/result")
            let teleTAN = try XCTUnwrap(resultPage.teleTAN)
            let csrf = try await agent.get(call).hidden("csrf") ?? ""
            for _ in 0..<Calls.readBackLimit {
                let page = try await agent.readBack(call, csrf: csrf, "ZZZZ")
                XCTAssertEqual(page.status, .ok)
            }
            // Even the right one is no longer compared: no more guesses.
            let exhausted = try await agent.readBack(call, csrf: csrf, teleTAN)
            XCTAssertEqual(exhausted.status, .ok)
            XCTAssertTrue(exhausted.body.contains("id=\"read-back-exhausted\""))
            XCTAssertFalse(exhausted.body.contains("Matches"))
        }
    }

    func testEndCallNeedsAnOutcomeAndIsAudited() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let missing = try await agent.submitCall(call, action: "end", checks: ["positive_pcr"])
            XCTAssertEqual(missing.status, .badRequest)
            XCTAssertTrue(missing.body.contains("Please choose how the call ended"))
            let forged = try await agent.submitCall(call, action: "end", checks: [], outcome: "teletan_issued")
            XCTAssertEqual(forged.status, .badRequest, "only the outcomes offered")
            let ended = try await agent.submitCall(call, action: "end", checks: [], outcome: "not_eligible")
            XCTAssertEqual(ended.location, "/hotline?done=ended")
            let entry = try await portal.auditActions("hotline.call.ended").last
            XCTAssertTrue(entry?.details.contains("not_eligible") ?? false)
            let after = try await agent.submitCall(call, action: "issue", checks: Self.allChecks)
            XCTAssertEqual(after.location, call, "an ended call issues nothing")
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
        }
    }

    func testRolesOfTheHotlinePages() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let admin = try await portal.signedIn(.admin)
            let agent = try await portal.signedIn(.hotline)
            let event = try await portal.signedIn(.event)
            for path in ["/hotline", "/hotline/callbacks"] {
                let officerPage = try await officer.get(path)
                XCTAssertEqual(officerPage.status, .forbidden, path)
                let adminPage = try await admin.get(path)
                XCTAssertEqual(adminPage.status, .forbidden, "admins take no calls: \(path)")
                let agentPage = try await agent.get(path)
                XCTAssertEqual(agentPage.status, .ok, path)
            }
            let adminOverview = try await admin.get("/hotline/overview")
            XCTAssertEqual(adminOverview.status, .ok)
            let agentOverview = try await agent.get("/hotline/overview")
            XCTAssertEqual(agentOverview.status, .ok)
            let officerOverview = try await officer.get("/hotline/overview")
            XCTAssertEqual(officerOverview.status, .forbidden)
            // Hotline staff cannot issue EVENT teleTANs.
            let home = try await agent.get("/")
            let eventTry = try await agent.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": "x", "authority": "a"])
            XCTAssertEqual(eventTry.status, .forbidden)
            let eventHotline = try await event.get("/hotline")
            XCTAssertEqual(eventHotline.status, .forbidden)
        }
    }

    func testOverviewCountsOnly() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let issuedCall = try await agent.startCall()
            _ = try await agent.submitCall(issuedCall, action: "issue", checks: Self.allChecks)
            _ = try await agent.get("/teletan/result")
            let endedCall = try await agent.startCall()
            _ = try await agent.submitCall(endedCall, action: "end", checks: [], outcome: "caller_hung_up")
            _ = try await agent.queueCallback(phone: "+49 30 5550000", name: "Overview Person")
            // An officer's teleTAN is no hotline teleTAN.
            _ = try await portal.signedIn(.officer).issueTeleTAN()
            let figures = try await HotlineOverview(callbacks: portal.portal.hotline.callbacks, timeZone: TimeZone(identifier: "Europe/Berlin")!)
                .figures(now: portal.clock.now, on: portal.db)
            XCTAssertEqual(figures.today["open"], 1, "the issued call is not passed on yet")
            XCTAssertEqual(figures.today["caller_hung_up"], 1)
            XCTAssertEqual(figures.today["callback_queued"], 1)
            XCTAssertEqual(figures.callbacksWaiting, 1)
            XCTAssertEqual(figures.teleTANsPerDay.last?.count, 1)
            let page = try await agent.get("/hotline/overview")
            XCTAssertEqual(page.status, .ok)
            XCTAssertTrue(page.body.contains("<td id=\"total-today\">3</td>"), page.body)
            XCTAssertFalse(page.body.contains("Overview Person"))
            Self.assertNoNumber(page.body, "+49 30 5550000")
        }
    }
}

extension HotlineTests {
    /// `text` shows the number in none of the forms it could take: as typed, E.164, its digits,
    /// or grouped as the callback page shows it.
    static func assertNoNumber(_ text: String, _ typed: String, file: StaticString = #filePath, line: UInt = #line) {
        let number = PhoneNumber(typed)!
        for form in [typed, number.e164, String(number.e164.dropFirst()), number.readable] {
            XCTAssertFalse(text.contains(form), "the number as \(form)", file: file, line: line)
        }
    }

    /// The page does not show `teleTAN`, neither in its groups nor anywhere once markup and
    /// spaces are taken out.
    static func assertNoTeleTAN(_ page: Browser.Page, _ teleTAN: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(page.teleTAN, file: file, line: line)
        let text = page.body.replacing(/<[^>]*>/, with: "").filter { !$0.isWhitespace }.uppercased()
        XCTAssertFalse(text.contains(teleTAN.uppercased()), "the teleTAN is on the page", file: file, line: line)
    }
}

extension Browser {
    /// Presses **Start call** on `/hotline`; the call page's path.
    func startCall() async throws -> String {
        let home = try await get("/hotline")
        let started = try await post("/hotline/calls", ["csrf": home.hidden("csrf") ?? ""])
        XCTAssertEqual(started.status, .seeOther)
        return started.location ?? ""
    }

    /// Submits the call page's form with one of its buttons (`issue`, `callback`, `end`).
    func submitCall(
        _ call: String, action: String, checks: [String], phone: String? = nil, name: String? = nil, outcome: String? = nil
    ) async throws -> Page {
        let page = try await get(call)
        var pairs: [(String, String)] = [("csrf", page.hidden("csrf") ?? ""), ("nonce", page.hidden("nonce") ?? "")]
        pairs += checks.map { ("checks[]", $0) }
        if let phone { pairs.append(("phone", phone)) }
        if let name { pairs.append(("name", name)) }
        if let outcome { pairs.append(("outcome", outcome)) }
        return try await postPairs("\(call)/\(action)", pairs)
    }

    /// Starts a call and queues a callback from it; the callback's id.
    func queueCallback(phone: String, name: String) async throws -> String {
        let call = try await startCall()
        let queued = try await submitCall(call, action: "callback", checks: [], phone: phone, name: name)
        XCTAssertEqual(queued.location, "/hotline?done=callback_queued")
        let queue = try await get("/hotline/callbacks")
        let ids = queue.body.matches(of: /id="callback-([0-9a-f-]{36})"/).map { String($0.output.1) }
        return ids.last ?? ""
    }

    /// Posts a read-back (answered with a redirect to the call page) and returns the call page.
    func readBack(_ call: String, csrf: String, _ typed: String) async throws -> Page {
        let posted = try await post(call + "/read-back", ["csrf": csrf, "read_back": typed])
        XCTAssertEqual(posted.status, .seeOther)
        XCTAssertEqual(posted.location, call)
        return try await get(call)
    }

    /// A form POST with repeated names (`checks[]`).
    func postPairs(_ path: String, _ pairs: [(String, String)]) async throws -> Page {
        let body = pairs.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        return try await send(path, method: .post, body: ByteBuffer(string: body), headers: [.contentType: "application/x-www-form-urlencoded"])
    }
}
