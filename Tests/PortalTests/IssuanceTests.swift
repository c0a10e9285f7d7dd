import AccessControl
import HTTPTypes
import Storage
import Foundation
import HummingbirdTesting
import TeleTAN
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb
@testable import Issuance

final class IssuanceTests: XCTestCase {
    /// Issuance is domain code: a hotline call (or anything else) issues through the same
    /// issuer with an ``ActingUser``, without an HTTP request.
    func testIssuerIssuesWithoutHTTP() async throws {
        try await PortalHarness.run { portal in
            let issuance = portal.portal.issuance
            let nonces = portal.portal.foundation.nonces
            let agent = ActingUser(
                username: "tt-hotline", role: .hotline, roles: [.hotline], sessionHash: "call-session",
                address: "203.0.113.9", requestID: "call-1", logger: TestDatabases.testLogger)
            let nonce = nonces.make(sessionHash: agent.sessionHash, now: portal.clock.now)

            let outcome = try await issuance.issuer.issue(type: .test, by: agent, nonce: nonce)
            XCTAssertEqual(outcome, .issued(type: .test))
            let again = try await issuance.issuer.issue(type: .test, by: agent, nonce: nonce)
            XCTAssertEqual(again, .formAlreadyUsed)
            let whileWaiting = try await issuance.issuer.issue(
                type: .test, by: agent, nonce: nonces.make(sessionHash: agent.sessionHash, now: portal.clock.now))
            XCTAssertEqual(whileWaiting, .teleTANWaiting, "the one not shown yet is never replaced")

            let waiting = try await issuance.displays.take(sessionHash: agent.sessionHash, now: portal.clock.now, on: portal.db)
            let teleTAN = try XCTUnwrap(waiting.flatMap { TeleTAN($0.content.teleTAN) })
            do {
                _ = try await issuance.issuer.issue(type: .test, by: agent, nonce: nonces.make(sessionHash: agent.sessionHash, now: portal.clock.now))
                XCTFail("a second teleTAN within the minimum interval")
            } catch let error as IssuanceError {
                XCTAssertEqual(error, .tooManyRequests(retryAfterSeconds: 30, global: false))
            }
            let entries = try await portal.auditActions("teletan.issue")
            XCTAssertEqual(entries.map(\.outcome), ["success", "refused", "refused", "refused"])
            let issued = try XCTUnwrap(entries.first)
            XCTAssertEqual(issued.actor, "tt-hotline")
            XCTAssertEqual(issued.role, "hotline")
            XCTAssertEqual(issued.address, "203.0.113.9")
            XCTAssertEqual(issued.requestID, "call-1")
            XCTAssertEqual(issued.subject, portal.portal.foundation.hasher.hash(teleTAN.value, for: .teleTANFingerprint))
            XCTAssertEqual(entries.map { $0.detailValues["reason"] }, [nil, "form_already_used", "teletan_waiting", "rate_limit"])
        }
    }

    func testTeleTANIsShownExactlyOnce() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            let posted = try await browser.pressIssue()
            XCTAssertEqual(posted.status, .seeOther)
            XCTAssertEqual(posted.location, "/teletan/result")

            let result = try await browser.get("/teletan/result")
            XCTAssertEqual(result.status, .ok)
            XCTAssertEqual(result.headers[.cacheControl], "no-store")
            let shown = try XCTUnwrap(result.teleTAN)
            XCTAssertNotNil(TeleTAN(shown), "a valid teleTAN with its check character")
            XCTAssertTrue(result.body.contains("<span class=\"group\">\(shown.prefix(3))</span>"))
            XCTAssertTrue(result.body.contains("id=\"teletan-spelled\""))
            XCTAssertTrue(result.body.contains("id=\"copy-teletan\""))
            XCTAssertTrue(result.body.contains("I have passed it on"))
            XCTAssertNotNil(result.headers[HTTPField.Name("Refresh")!], "leaves the page after the display time")

            for _ in 0..<2 {  // reload, back button, second tab: all the same request
                let again = try await browser.get("/teletan/result")
                XCTAssertEqual(again.status, .ok)
                XCTAssertTrue(again.body.contains("id=\"already-shown\""))
                XCTAssertFalse(again.body.contains(shown))
            }
            let done = try await browser.post("/teletan/done", ["csrf": result.hidden("csrf")!])
            XCTAssertEqual(done.location, "/")
        }
    }

    func testDoubleSubmitCreatesOneTeleTAN() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            let home = try await browser.get("/")
            let form = ["csrf": home.hidden("csrf")!, "nonce": home.hidden("nonce")!]
            let first = try await browser.post("/teletan", form)
            let second = try await browser.post("/teletan", form)
            XCTAssertEqual(first.location, "/teletan/result")
            XCTAssertEqual(second.location, "/teletan/result", "the second click lands on the same result page")
            let page = try await browser.get("/teletan/result")
            XCTAssertNotNil(page.teleTAN, "the officer still sees the one teleTAN the first click created")
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 1)
            let audits = try await portal.auditActions("teletan.issue")
            XCTAssertEqual(audits.map(\.outcome), ["success", "refused"])
            XCTAssertEqual(audits.last?.detailValues["reason"], "form_already_used")
            // A nonce that was never made for this session is told apart from a reused one.
            let forged = try await browser.post("/teletan", ["csrf": home.hidden("csrf")!, "nonce": String(repeating: "0", count: 64)])
            XCTAssertEqual(forged.status, .badRequest, "this form has expired, please reload")
            let lastReason = try await portal.auditActions("teletan.issue").last?.detailValues["reason"]
            XCTAssertEqual(lastReason, "form_invalid")
        }
    }

    func testFormNoncesAreBoundToTheirSessionUsedOnceAndExpire() async throws {
        try await PortalHarness.run { portal in
            // Showing the form writes nothing, however often.
            let officer = try await portal.signedIn(.officer)
            for _ in 0..<20 { _ = try await officer.get("/") }
            let stored = try await portal.count("SELECT COUNT(*) AS n FROM form_nonces")
            XCTAssertEqual(stored, 0)

            let nonces = portal.portal.foundation.nonces
            let db = portal.portal.database.database(logger: TestDatabases.testLogger)
            let now = portal.clock.now
            let lifetime = nonces.lifetime.seconds
            let nonce = nonces.make(sessionHash: "session-a", now: now)
            let parts = nonce.split(separator: "-").map(String.init)
            XCTAssertEqual(parts.count, 3)
            let refused: [(String, String, Date, String)] = [
                (nonce, "session-b", now, "another session's nonce"),
                (parts[0] + "-" + parts[1] + "-" + String(parts[2].reversed()), "session-a", now, "a changed MAC"),
                (parts[0] + "-" + String(Int64(now.timeIntervalSince1970) - 60, radix: 16) + "-" + parts[2], "session-a", now, "a changed time"),
                (nonce, "session-a", now.addingTimeInterval(lifetime + 1), "older than its lifetime"),
                (nonces.make(sessionHash: "session-a", now: now.addingTimeInterval(120)), "session-a", now, "made in the future"),
                ("", "session-a", now, "empty"),
                (String(repeating: "0", count: 64), "session-a", now, "the old format"),
                (nonce + "-0", "session-a", now, "an extra part"),
            ]
            for (candidate, session, time, what) in refused {
                let claim = try await nonces.consume(candidate, sessionHash: session, now: time, on: db)
                XCTAssertEqual(claim, .invalid, what)
            }
            let first = try await nonces.consume(nonce, sessionHash: "session-a", now: now.addingTimeInterval(lifetime - 1), on: db)
            XCTAssertEqual(first, .claimed, "good until the end of its lifetime")
            let second = try await nonces.consume(nonce, sessionHash: "session-a", now: now, on: db)
            XCTAssertEqual(second, .alreadyUsed)
            // Ending the session keeps its used nonces: a replay already past the session check
            // must still find them.
            try await portal.portal.foundation.sessions.end(sessionHash: "session-a", on: db)
            let afterSignOut = try await nonces.consume(nonce, sessionHash: "session-a", now: now, on: db)
            XCTAssertEqual(afterSignOut, .alreadyUsed)
            // The cleanup forgets used nonces only once they are too old to be accepted anyway.
            try await nonces.purge(olderThan: now.addingTimeInterval(-1), on: db)
            let afterEarlyPurge = try await nonces.consume(nonce, sessionHash: "session-a", now: now, on: db)
            XCTAssertEqual(afterEarlyPurge, .alreadyUsed)
            try await nonces.purge(olderThan: now.addingTimeInterval(1), on: db)
            let kept = try await portal.count("SELECT COUNT(*) AS n FROM form_nonces")
            XCTAssertEqual(kept, 0)
        }
    }

    func testConcurrentSubmitsOfOneFormCreateOneTeleTAN() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }) { portal in
            let browser = try await portal.signedIn(.officer)
            let home = try await browser.get("/")
            let form = ["csrf": home.hidden("csrf")!, "nonce": home.hidden("nonce")!]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 { group.addTask { _ = try await browser.post("/teletan", form) } }
                try await group.waitForAll()
            }
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 1)
        }
    }

    func testTeleTANIsStoredOnlyAsKeyedHashAndFingerprint() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            let maybeShown = try await browser.issueTeleTAN()
            let shown = try XCTUnwrap(maybeShown)
            struct Row: Decodable { let hash: String; let type: String; let requested_by: String }
            let rows = try await sql(portal.db).raw("SELECT hash, type, requested_by FROM teletans").all(decoding: Row.self)
            XCTAssertEqual(rows.map(\.hash), [portal.portal.foundation.hasher.hash(shown, for: .teleTANStorage)])
            XCTAssertEqual(rows.first?.type, "TEST")
            XCTAssertEqual(rows.first?.requested_by, "tt-officer")
            let issued = try await portal.auditActions("teletan.issue")
            XCTAssertEqual(issued.first?.subject, portal.portal.foundation.hasher.hash(shown, for: .teleTANFingerprint))
            XCTAssertEqual(issued.first?.role, "officer")
            XCTAssertEqual(issued.first?.detailValues["type"], "TEST")
            XCTAssertNotNil(issued.first?.detailValues["valid_until"])
            XCTAssertNotNil(issued.first?.requestID)
            let pending = try await portal.count("SELECT COUNT(*) AS n FROM pending_displays")
            XCTAssertEqual(pending, 0, "deleted when shown")
            if case .sqlite(let path) = portal.location {
                for file in [path, path + "-wal"] {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    XCTAssertNil(data.range(of: Data(shown.utf8)), "teleTAN found in \(file)")
                }
            }
        }
    }

    func testPerUserIntervalAndDailyLimit() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            let issued1 = try await browser.issueTeleTAN()
            XCTAssertNotNil(issued1)
            let limited = try await browser.pressIssue()
            XCTAssertEqual(limited.status, .tooManyRequests)
            let retry = try XCTUnwrap(limited.headers[.retryAfter].flatMap(Int.init))
            XCTAssertTrue((25...31).contains(retry), "Retry-After \(retry)")
            XCTAssertTrue(limited.body.contains("Too many teleTANs were requested. Please try again in \(retry) seconds."))
            let refused = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(refused?.outcome, "refused")
            XCTAssertEqual(refused?.detailValues["reason"], "rate_limit")
            portal.clock.advance(seconds: 31)
            let issued2 = try await browser.issueTeleTAN()
            XCTAssertNotNil(issued2)
        }
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero; $0.teleTANsPerUserPerDay = 2 }) { portal in
            let browser = try await portal.signedIn(.officer)
            let issued3 = try await browser.issueTeleTAN()
            XCTAssertNotNil(issued3)
            let issued4 = try await browser.issueTeleTAN()
            XCTAssertNotNil(issued4)
            let third = try await browser.pressIssue()
            XCTAssertEqual(third.status, .tooManyRequests)
            // The day is a rolling 24 h: the first issuance frees its place a day later.
            let retry = try XCTUnwrap(third.headers[.retryAfter].flatMap(Int.init))
            XCTAssertTrue((23 * 3600...24 * 3600 + 60).contains(retry), "Retry-After \(retry)")
            XCTAssertTrue(third.body.contains("Please try again in 24 hours."), "a wait of a day is not shown in seconds")
            let refused = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(refused?.outcome, "refused")
            XCTAssertEqual(refused?.detailValues["reason"], "rate_limit")
            let colleague = try await portal.session(username: "tt-officer-2", roles: [.officer])
            let issued5 = try await colleague.issueTeleTAN()
            XCTAssertNotNil(issued5, "the limit is per user")
        }
    }

    func testGlobalLimit() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero; $0.teleTANsPerHourGlobal = 2 }) { portal in
            let officer = try await portal.signedIn(.officer)
            let colleague2 = try await portal.session(username: "tt-officer-2", roles: [.officer])
            let issued6 = try await officer.issueTeleTAN()
            XCTAssertNotNil(issued6)
            let issued7 = try await colleague2.issueTeleTAN()
            XCTAssertNotNil(issued7)
            let limited = try await colleague2.pressIssue()
            XCTAssertEqual(limited.status, .tooManyRequests)
            XCTAssertTrue(limited.body.contains("The limit of teleTANs for the whole service is reached."))
            XCTAssertNotNil(limited.headers[.retryAfter])
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 2)
            let reason = try await portal.auditActions("teletan.issue").last?.detailValues["reason"]
            XCTAssertEqual(reason, "global_limit")
            let metrics = try await portal.metrics()
            XCTAssertTrue(metrics.contains("portal_rate_limit_hits_total"))
        }
    }

    func testNoTeleTANWithoutItsAuditEntry() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            // Break the audit trail's head: the audit append inside the issuance must fail.
            try await sql(portal.db).raw("DELETE FROM audit_head").run()
            let posted = try await browser.pressIssue()
            XCTAssertEqual(posted.status, .serviceUnavailable)
            XCTAssertTrue(posted.body.contains("No teleTAN was issued."))
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 0)
            let result = try await browser.get("/teletan/result")
            XCTAssertNil(result.teleTAN)
        }
    }

    func testTeleTANIsHiddenAfterTheDisplayTime() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            let issued = try await browser.pressIssue()
            XCTAssertEqual(issued.location, "/teletan/result")
            let waiting = try await portal.count("SELECT COUNT(*) AS n FROM pending_displays")
            XCTAssertEqual(waiting, 1, "a teleTAN waits to be shown")
            portal.clock.advance(seconds: 11 * 60)
            let late = try await browser.get("/teletan/result")
            XCTAssertTrue(late.body.contains("id=\"already-shown\""))
            XCTAssertNil(late.teleTAN)
            // A shown teleTAN leaves its page when the display time is over, even without
            // JavaScript, and the start page then says why it is gone.
            let again = try await browser.pressIssue()
            XCTAssertEqual(again.status, .seeOther)
            let shown = try await browser.get("/teletan/result")
            XCTAssertNotNil(shown.teleTAN)
            XCTAssertEqual(shown.headers[.refresh], "600;url=/?hidden=1")
            let start = try await browser.get("/?hidden=1")
            XCTAssertTrue(start.body.contains("id=\"teletan-was-hidden\""))
        }
    }

    func testGermanResultPageSpellsWithDIN5009() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedIn(.officer)
            browser.extraHeaders[.acceptLanguage] = "de-DE,de;q=0.9,en;q=0.5"
            _ = try await browser.pressIssue()
            let page = try await browser.get("/teletan/result")
            XCTAssertTrue(page.body.contains("Ihre teleTAN"))
            XCTAssertTrue(page.body.contains("<html lang=\"de\">"))
            XCTAssertTrue(page.body.contains("nach 10 Minuten ausgeblendet"))
            let shown = try XCTUnwrap(page.teleTAN)
            if let letter = shown.first(where: \.isLetter), letter == "A" || letter == "B" {
                XCTAssertTrue(page.body.contains(letter == "A" ? "Aachen" : "Berlin"))
            }
            XCTAssertTrue(["Zwo", "Drei", "Vier", "Fünf", "Sechs", "Sieben", "Acht", "Neun", "Aachen", "Berlin", "Chemnitz",
                           "Düsseldorf", "Essen", "Frankfurt", "Goslar", "Hamburg", "Jena", "Köln", "München", "Nürnberg",
                           "Potsdam", "Quickborn", "Rostock", "Salzwedel", "Tübingen", "Unna", "Völklingen", "Wuppertal",
                           "Xanten", "Ypsilon", "Zwickau"].contains { page.body.contains($0) })
        }
    }
}
