import AccessControl
import Foundation
import HTTPTypes
import XCTest
@testable import Hotline
@testable import Portal
@testable import PortalWeb

/// Issue 18's hotline items, through HTTP on SQLite and PostgreSQL: Enter never issues, one
/// waiting callback per number, a call that survives the clock, and the small things an agent
/// notices.
final class HotlineSecondLookTests: XCTestCase {
    static let allChecks = HotlineTests.allChecks

    // MARK: Enter never issues a teleTAN

    /// The call form's first submit button is the one Enter presses: it must be the harmless
    /// default, never "Issue teleTAN".
    func testTheCallFormsDefaultButtonIsNotIssue() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let page = try await agent.get(call)
            let form = try XCTUnwrap(page.body.range(of: "id=\"call-form\"")).upperBound
            let firstSubmit = try XCTUnwrap(page.body[form...].range(of: "type=\"submit\"")).lowerBound
            let tag = page.body[page.body[..<firstSubmit].range(of: "<button", options: .backwards)!.lowerBound...]
                .prefix { $0 != ">" }
            XCTAssertTrue(tag.contains("id=\"enter-default\""), String(tag))
            XCTAssertTrue(tag.contains("formaction=\"\(call)/callback\""), String(tag))
        }
    }

    func testEnterWithNothingTypedSavesTheTicksAndIssuesNothing() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let page = try await agent.get(call)
            let pressed = try await agent.postPairs(call + "/callback",
                [("csrf", page.hidden("csrf") ?? ""), ("nonce", page.hidden("nonce") ?? ""), ("enter", "1"), ("phone", " "), ("name", "")]
                + Self.allChecks.map { ("checks[]", $0) })
            XCTAssertEqual(pressed.status, .ok)
            XCTAssertTrue(pressed.body.contains("Enter does not issue a teleTAN"), pressed.body)
            for id in Self.allChecks { XCTAssertTrue(pressed.body.contains("id=\"check-\(id)\" checked"), id) }
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0)
            let queued = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks")
            XCTAssertEqual(queued, 0)
            let answers = try await portal.auditActions("hotline.call.checks").last
            XCTAssertTrue(answers?.details.contains("positive_pcr=yes") ?? false, "the ticks are recorded")
            let row = try await Calls().find(Self.id(call), on: portal.db)
            XCTAssertNil(row?.ended_at, "the call stays open")
        }
    }

    func testEnterInPhoneOrNameQueuesTheCallback() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let page = try await agent.get(call)
            let pressed = try await agent.postPairs(call + "/callback",
                [("csrf", page.hidden("csrf") ?? ""), ("nonce", page.hidden("nonce") ?? ""), ("enter", "1"),
                 ("phone", "030 1234567"), ("name", "Erika Mustermann")] + Self.allChecks.map { ("checks[]", $0) })
            XCTAssertEqual(pressed.location, "/hotline?done=callback_queued")
            let created = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(created, 0, "every check ticked, and still no teleTAN")
            // Only a name typed: the callback's own message about the number, nothing issued.
            let second = try await agent.startCall()
            let again = try await agent.get(second)
            let halfway = try await agent.postPairs(second + "/callback",
                [("csrf", again.hidden("csrf") ?? ""), ("nonce", again.hidden("nonce") ?? ""), ("enter", "1"), ("phone", ""), ("name", "Max")]
                + Self.allChecks.map { ("checks[]", $0) })
            XCTAssertEqual(halfway.status, .badRequest)
            XCTAssertTrue(halfway.body.contains("Please enter a phone number"))
            XCTAssertTrue(halfway.body.contains("value=\"Max\""))
        }
    }

    // MARK: One number, one waiting callback

    func testTheSameNumberWaitsInTheQueueOnce() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let first = try await agent.queueCallback(phone: "030 1234567", name: "Erika")
            // The same number typed differently: refused with the time it waits since, the call
            // stays open, and what was typed stays in the form.
            let call = try await agent.startCall()
            let refused = try await agent.submitCall(call, action: "callback", checks: ["positive_pcr"], phone: "+49 (0)30 123 4567", name: "Erika M.")
            XCTAssertEqual(refused.status, .conflict)
            XCTAssertTrue(refused.body.contains("already waiting in the callback queue"), refused.body)
            XCTAssertTrue(refused.body.contains("value=\"Erika M.\""))
            let row = try await Calls().find(Self.id(call), on: portal.db)
            XCTAssertNil(row?.ended_at)
            let waiting = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE status = 'waiting'")
            XCTAssertEqual(waiting, 1)
            let refusal = try await portal.auditActions("hotline.callback.queued").last
            XCTAssertEqual(refusal?.outcome, "refused")
            XCTAssertEqual(refusal?.subject, "callback:\(first)")
            XCTAssertTrue(refusal?.details.contains("already_waiting") ?? false)
            // Another number is queued as usual.
            _ = try await agent.queueCallback(phone: "030 7654321", name: "Max")
            // Once the first callback has ended, the number may wait again.
            let queue = try await agent.get("/hotline/callbacks")
            _ = try await agent.post("/hotline/callbacks/\(first)/take", ["csrf": queue.hidden("csrf") ?? ""])
            _ = try await agent.post("/hotline/callbacks/\(first)/outcome", ["csrf": queue.hidden("csrf") ?? "", "outcome": "refused"])
            let requeued = try await agent.submitCall(call, action: "callback", checks: [], phone: "030 1234567", name: "Erika")
            XCTAssertEqual(requeued.location, "/hotline?done=callback_queued")
        }
    }

    /// An entry past the retention time that the cleanup has not reached yet does not block the
    /// number (the unique index would otherwise refuse it).
    func testAnExpiredEntryDoesNotBlockTheNumber() async throws {
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(3600) }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let old = try await agent.queueCallback(phone: "0171 2345678", name: "Early")
            portal.clock.advance(seconds: 3601)
            let fresh = try await portal.signedIn(.hotline)
            let again = try await fresh.queueCallback(phone: "0171 2345678", name: "Early")
            XCTAssertNotEqual(again, old)
            let expired = try await portal.auditActions("hotline.callback.expired")
            XCTAssertEqual(expired.map(\.subject), ["callback:\(old)"])
        }
    }

    /// Two agents queueing the same number at the same moment: one entry.
    func testTheSameNumberQueuedAtOnceWaitsOnce() async throws {
        try await PortalHarness.run { portal in
            var agents: [(Browser, String)] = []
            for index in 0..<4 {
                let browser = try await portal.session(username: "agent-\(index)", roles: [.hotline])
                agents.append((browser, try await browser.startCall()))
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (browser, call) in agents {
                    group.addTask { try await browser.submitCall(call, action: "callback", checks: [], phone: "0221 9876543", name: "Race").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0 == .seeOther }.count, 1, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .conflict }.count, 3, "\(statuses)")
            let waiting = try await portal.count("SELECT COUNT(*) AS n FROM hotline_callbacks WHERE status = 'waiting'")
            XCTAssertEqual(waiting, 1)
        }
    }

    // MARK: A call survives the clock

    func testTheResultPageReturnsToTheCallWhenItsDisplayTimeEnds() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            _ = try await agent.submitCall(call, action: "issue", checks: Self.allChecks)
            let result = try await agent.get("/teletan/result")
            let refresh = try XCTUnwrap(result.headers[HTTPField.Name("Refresh")!])
            XCTAssertTrue(refresh.hasSuffix(";url=\(call)?hidden=1"), refresh)
            let back = try await agent.get(call + "?hidden=1")
            XCTAssertTrue(back.body.contains("its display time is over. Continue with the read-back"), back.body)
            XCTAssertTrue(back.body.contains("id=\"check-read-back\""), "still in the call")
            // An officer's teleTAN still leads to the start page.
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            _ = try await officer.post("/teletan", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? ""])
            let shown = try await officer.get("/teletan/result")
            XCTAssertTrue(shown.headers[HTTPField.Name("Refresh")!]?.hasSuffix(";url=/?hidden=1") ?? false)
        }
    }

    func testSigningInAgainLeadsBackToTheOpenCallWithItsTicks() async throws {
        try PortalHarness.requirePAMStack()
        try await PortalHarness.run(configure: { $0.idleTimeout = .seconds(15 * 60) }) { portal in
            // No open call: a hotline-only agent starts at the hotline page.
            let first = try await portal.browser().signIn(Account.hotline.rawValue, Account.hotline.password)
            XCTAssertEqual(first.location, "/hotline")
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            _ = try await agent.submitCall(call, action: "end", checks: ["positive_pcr"], outcome: "")
            let page = try await agent.get(call)
            XCTAssertTrue(page.body.contains("Without activity your session ends after 15 minutes"), page.body)
            // The session times out; signing in again goes straight back to the call.
            portal.clock.advance(seconds: 16 * 60)
            let expired = try await agent.get(call)
            XCTAssertEqual(expired.status, .seeOther, "signed out by the idle timeout")
            let again = try await agent.signIn(Account.hotline.rawValue, Account.hotline.password)
            XCTAssertEqual(again.location, call)
            let resumed = try await agent.get(call)
            XCTAssertTrue(resumed.body.contains("id=\"check-positive_pcr\" checked"), "the ticks were on the server")
        }
    }

    func testLandingPaths() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let landing = { (user: String, roles: Set<Role>) in try await HotlineFeature.landing(username: user, roles: roles, on: portal.db) }
            let hotlineOnly = try await landing("tt-hotline", [.hotline])
            XCTAssertEqual(hotlineOnly, "/hotline")
            let officer = try await landing("tt-officer", [.officer])
            XCTAssertEqual(officer, "/")
            let both = try await landing("tt-hotline", [.hotline, .officer])
            XCTAssertEqual(both, "/")
            let call = try await agent.startCall()
            portal.clock.advance(seconds: 60)
            let newest = try await agent.startCall()
            let open = try await landing("tt-hotline", [.hotline, .officer])
            XCTAssertEqual(open, newest)
            XCTAssertNotEqual(open, call)
            let admin = try await landing("tt-hotline", [.admin])
            XCTAssertEqual(admin, "/", "no hotline role: never a call page")
        }
    }

    func testAfterReachedTheCallShowsNumberAndNameUntilItEnds() async throws {
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(3600) }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let id = try await agent.queueCallback(phone: "040 9876543", name: "Erika Mustermann")
            let call = try await agent.reach(callback: id)
            let page = try await agent.get(call)
            XCTAssertTrue(page.body.contains("id=\"caller-name\">Erika Mustermann<"), page.body)
            XCTAssertTrue(page.body.contains("href=\"tel:+49409876543\""), page.body)
            // The line dropped: the agent ends the call; the number and name are gone.
            _ = try await agent.submitCall(call, action: "end", checks: [], outcome: "caller_hung_up")
            let ended = try await agent.get(call)
            XCTAssertFalse(ended.body.contains("Erika"))
            let row = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
            XCTAssertNil(row?.sealed_contact)
        }
    }

    func testAReachedCallbacksContactGoesAtTheRetentionLimit() async throws {
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(3600) }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let id = try await agent.queueCallback(phone: "040 9876543", name: "Erika Mustermann")
            let call = try await agent.reach(callback: id)
            portal.clock.advance(seconds: 3601)
            try await portal.portal.runCleanup()
            let row = try await portal.portal.hotline.callbacks.find(UUID(uuidString: id)!, on: portal.db)
            XCTAssertNil(row?.sealed_contact, "retention holds for a call still going on")
            let page = try await portal.signedIn(.hotline).get(call)
            XCTAssertFalse(page.body.contains("Erika"))
        }
    }

    // MARK: Small things an agent notices

    func testMissingRequiredChecksAreMarked() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let ticked = [Self.allChecks[0]]
            let refused = try await agent.submitCall(call, action: "issue", checks: ticked)
            XCTAssertEqual(refused.status, .badRequest)
            let required = HotlineChecks.standard.all.filter(\.required).map(\.id)
            for id in required where !ticked.contains(id) {
                XCTAssertTrue(refused.body.contains("id=\"missing-\(id)\""), id)
                XCTAssertTrue(refused.body.contains("aria-describedby=\"call-error missing-\(id)\""), id)
            }
            XCTAssertFalse(refused.body.contains("id=\"missing-\(ticked[0])\""))
            let plain = try await agent.get(call)
            XCTAssertFalse(plain.body.contains("id=\"missing-"), "marked only after Issue was pressed")
        }
    }

    func testTheNameErrorSaysWhatIsWrong() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let cases = [
                ("Erika\tMustermann", "invisible control character"), ("Eri\u{200B}ka", "invisible control character"),
                (String(repeating: "a", count: 101), "at most 100 characters"), ("  ", "Please enter the name"),
            ]
            for (name, expected) in cases {
                let page = try await agent.submitCall(call, action: "callback", checks: [], phone: "030 1234567", name: name)
                XCTAssertEqual(page.status, .badRequest, "\(name) \(page.location ?? "")")
                XCTAssertTrue(page.body.contains(expected), "\(name): \(expected)")
            }
            XCTAssertEqual(PersonName.problem("Erika\u{7}"), .controlCharacter)
            XCTAssertNil(PersonName.problem("Erika Mustermann"))
        }
    }

    func testTheQueueAndTheScriptSayTheRetentionInWords() async throws {
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(3600) }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let queue = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(queue.body.contains("deleted after one hour at the latest"), queue.body)
            let call = try await agent.startCall()
            let script = try await agent.get(call)
            XCTAssertTrue(script.body.contains("at the latest after one hour."), script.body)
            _ = try await agent.get("/language/de")
            let german = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(german.body.contains("spätestens nach einer Stunde gelöscht"), german.body)
        }
        try await PortalHarness.run(configure: { $0.callbackRetention = .seconds(90 * 60) }) { portal in
            let queue = try await portal.signedIn(.hotline).get("/hotline/callbacks")
            XCTAssertTrue(queue.body.contains("deleted after 90 minutes at the latest"), queue.body)
        }
    }

    func testTheStartPageOffersStartCallToAHotlineAgent() async throws {
        try await PortalHarness.run { portal in
            let home = try await portal.signedIn(.hotline).get("/")
            XCTAssertTrue(home.body.contains("<form method=\"post\" action=\"/hotline/calls\""), home.body)
            XCTAssertTrue(home.body.contains("id=\"start-call\""))
            let officer = try await portal.signedIn(.officer).get("/")
            XCTAssertFalse(officer.body.contains("id=\"start-call\""))
        }
    }

    func testTheOverviewShowsDaysInThePortalsDateStyle() async throws {
        try await PortalHarness.run { portal in
            let overview = try await portal.signedIn(.hotline).get("/hotline/overview")
            XCTAssertNil(overview.body.firstMatch(of: /<td>\d{4}-\d{2}-\d{2}<\/td>/), "no ISO dates")
            XCTAssertNotNil(overview.body.firstMatch(of: /<td>\d{1,2} [A-Z][a-z]{2}<\/td>/), overview.body)
        }
    }

    static func id(_ call: String) -> UUID { UUID(uuidString: String(call.split(separator: "/").last!))! }
}

extension Browser {
    /// Takes a waiting callback and records **Reached**; the path of the call that continues it.
    func reach(callback id: String) async throws -> String {
        let queue = try await get("/hotline/callbacks")
        _ = try await post("/hotline/callbacks/\(id)/take", ["csrf": queue.hidden("csrf") ?? ""])
        let reached = try await post("/hotline/callbacks/\(id)/outcome", ["csrf": queue.hidden("csrf") ?? "", "outcome": "reached"])
        return try XCTUnwrap(reached.location)
    }
}
