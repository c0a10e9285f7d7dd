import Foundation
import Storage
import TeleTAN
import XCTest
@testable import Portal
@testable import PortalWeb

/// Issue 18, item 12: a page outside one's role, a session an admin ended and an expired session
/// each get their own message.
final class AccessMessagesTests: XCTestCase {
    func testAPageOutsideOnesRoleSaysSoAndABadFormTokenSaysSomethingElse() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let refused = try await officer.get("/admin/audit")
            XCTAssertEqual(refused.status, .forbidden)
            XCTAssertTrue(refused.body.contains("This page is not part of your role"), refused.body)
            let badToken = try await officer.post("/teletan", ["csrf": "wrong", "nonce": "x"])
            XCTAssertEqual(badToken.status, .forbidden)
            XCTAssertFalse(badToken.body.contains("not part of your role"))
            XCTAssertTrue(badToken.body.contains("or the form has expired"))
            _ = try await officer.get("/language/de")
            let german = try await officer.get("/hotline")
            XCTAssertTrue(german.body.contains("Diese Seite gehört nicht zu Ihrer Rolle"), german.body)
        }
    }

    func testASessionAnAdminEndedSaysSoAndAnExpiredOneSaysItExpired() async throws {
        try await PortalHarness.run(configure: { $0.idleTimeout = .seconds(15 * 60) }) { portal in
            let officer = try await portal.signedIn(.officer, address: "198.51.100.20")
            let admin = try await portal.signedIn(.admin)
            let list = try await admin.get("/admin/sessions")
            let handle = try XCTUnwrap(list.body.firstMatch(of: /<tr id="session-([0-9a-f]{32})" class="session">\s*<td class="username">tt-officer</).map { String($0.output.1) })
            let ended = try await admin.post("/admin/sessions/end", ["csrf": list.hidden("csrf") ?? "", "session": handle, "username": "tt-officer"])
            XCTAssertEqual(ended.location, "/admin/sessions?result=ended")
            let next = try await officer.get("/")
            XCTAssertEqual(next.location, "/signin?ended=1")
            let signIn = try await officer.get("/signin?ended=1")
            XCTAssertTrue(signIn.body.contains("An administrator has ended your session"), signIn.body)
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM ended_sessions")
            XCTAssertEqual(rows, 1)

            // An idle session that ran out: "expired", not "ended by an administrator".
            let idle = try await portal.signedIn(.hotline)
            portal.clock.advance(seconds: 16 * 60)
            let expired = try await idle.get("/")
            XCTAssertEqual(expired.location, "/signin?expired=1")
            // The record of the admin's ending goes with the session lifetime.
            portal.clock.advance(seconds: 13 * 60 * 60)
            try await portal.portal.runCleanup()
            let left = try await portal.count("SELECT COUNT(*) AS n FROM ended_sessions")
            XCTAssertEqual(left, 0)
        }
    }

    /// A teleTAN typed as a username can be a lock's key: the Lockouts page links no search with
    /// it (a URL would carry the teleTAN), other keys keep their link.
    func testALockOnATeleTANShapedNameLinksNoSearch() async throws {
        try await PortalHarness.run { portal in
            let until = portal.clock.now.addingTimeInterval(900)
            // Lock keys of names are lower-cased.
            let typed = TeleTAN.random().value.lowercased()
            try await Lockouts().lock(scope: "user", key: typed, until: until, now: portal.clock.now, on: portal.db)
            try await Lockouts().lock(scope: "user", key: "tt-officer", until: until, now: portal.clock.now, on: portal.db)
            let page = try await portal.signedIn(.admin).get("/admin/lockouts")
            XCTAssertTrue(page.body.contains(typed), "the lock is listed")
            XCTAssertFalse(page.body.contains("actor=\(typed)"), page.body)
            XCTAssertTrue(page.body.contains("actor=tt-officer"), page.body)
        }
    }
}
