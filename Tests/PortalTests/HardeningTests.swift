import AccessControl
import PAMAuth
import FluentKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Storage
import TeleTAN
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb
@testable import Issuance

/// The officer's flow, hardened (what a black-box review found): host and origin, metrics and
/// request ids, the cookie policy, times in the authority's zone, clear messages, usernames.
final class HardeningTests: XCTestCase {
    func testOtherHostsGet421ExceptHealthChecks() async throws {
        // The test client always names "localhost": a portal whose public URL is another host
        // refuses it, as it would refuse a name rebound to its address.
        try await PortalHarness.run(configure: { $0.publicURL = "https://portal.example.org" }) { portal in
            let browser = portal.browser()
            for path in ["/signin", "/", "/css/portal.css", "/nope"] {
                let page = try await browser.get(path)
                XCTAssertEqual(page.status, .misdirectedRequest, path)
            }
            let german = portal.browser()
            german.extraHeaders[.acceptLanguage] = "de"
            let page = try await german.get("/signin")
            XCTAssertTrue(page.body.contains("Falsche Adresse"), "a localised page")
            for path in ["/health/live", "/health/ready"] {
                let health = try await browser.get(path)
                XCTAssertEqual(health.status, .ok, "load balancers send the backend's address: \(path)")
            }
        }
        try await PortalHarness.run { portal in
            let page = try await portal.browser().get("/signin")
            XCTAssertEqual(page.status, .ok, "the public host is served")
        }
    }

    func testFormsFromOtherOriginsThanThePublicOneAreRefused() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            let form = ["csrf": home.hidden("csrf")!, "nonce": home.hidden("nonce")!]
            // What the old check compared with (the request's own Host) is not enough.
            let sameHostOtherScheme = try await officer.post("/teletan", form, headers: [.origin: "https://localhost"])
            XCTAssertEqual(sameHostOtherScheme.status, .forbidden)
            let issued = try await officer.post("/teletan", form, headers: [.origin: "http://localhost"])
            XCTAssertEqual(issued.location, "/teletan/result")
        }
    }

    func testMetricsOnlyOnTheirOwnListenerAndRequestIDsAreRandom() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let publicMetrics = try await browser.get("/metrics")
            XCTAssertEqual(publicMetrics.status, .notFound)
            XCTAssertFalse(publicMetrics.body.contains("portal_signins_total"))
            let metrics = try await portal.metrics()
            XCTAssertTrue(metrics.contains("portal_http_requests_total"), metrics)

            var ids: [String] = []
            for _ in 0..<20 {
                let page = try await browser.get("/signin")
                let id = try XCTUnwrap(page.headers[HTTPField.Name("X-Request-ID")!])
                XCTAssertNotNil(id.wholeMatch(of: /[0-9a-f]{32}/), id)
                XCTAssertTrue(page.body.contains(id) || page.status == .ok)
                ids.append(id)
            }
            XCTAssertEqual(Set(ids).count, ids.count)
            // A counter (even behind a random prefix) shares its leading digits between requests.
            XCTAssertEqual(Set(ids.map { $0.prefix(8) }).count, ids.count, "no shared prefix: \(ids)")
        }
    }

    func testLinksFromOtherSitesArriveSignedInButDoNotUseUpATeleTAN() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            _ = try await officer.pressIssue()
            let fromIntranet = try await officer.get("/teletan/result", headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            XCTAssertEqual(fromIntranet.status, .seeOther)
            XCTAssertEqual(fromIntranet.location, "/")
            let shown = try await officer.get("/teletan/result", headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            XCTAssertNotNil(shown.teleTAN, "still waiting after the cross-site link")
        }
    }

    func testValidUntilIsInTheAuthoritysTimeZoneWithItsName() async throws {
        // The test clock starts at 2027-01-15 08:00 UTC; a TEST teleTAN is valid for an hour.
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let english = try await officer.issueResultPage()
            XCTAssertTrue(english.body.contains("15 Jan 2027 at 10:00 CET"), english.body)
            portal.clock.advance(seconds: 31)
            officer.cookies[Language.cookieName] = "de"
            let german = try await officer.issueResultPage()
            XCTAssertTrue(german.body.contains("10:00 MEZ"), String(german.body.firstMatch(of: /valid-until">[^<]*/)?.output ?? "none"))
            XCTAssertFalse(german.body.contains("UTC"))
        }
        try await PortalHarness.run(configure: { $0.timeZone = TimeZone(identifier: "America/New_York")! }) { portal in
            let page = try await portal.signedIn(.officer).issueResultPage()
            let shown = String(page.body.firstMatch(of: /valid-until">[^<]*/)?.output ?? "none")
            XCTAssertTrue(shown.contains("04:00 GMT-5") || shown.contains("04:00 EST"), shown)
        }
    }

    func testAFormWhoseTokenIsNoLongerGoodSaysItExpired() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            portal.clock.advance(seconds: 9 * 3600)  // past the session lifetime the nonce is good for
            let fresh = try await portal.signedIn(.officer)
            let forged = try await fresh.post("/teletan", ["csrf": try await fresh.get("/").hidden("csrf")!, "nonce": home.hidden("nonce")!])
            XCTAssertEqual(forged.status, .badRequest)
            XCTAssertTrue(forged.body.contains("This form has expired. Please reload the page"), forged.body)
            XCTAssertFalse(forged.body.contains("already been shown"))
            let count = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(count, 0)
        }
    }

    func testASessionRemovedByTheCleanupStillSaysItExpired() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            portal.clock.advance(seconds: 20 * 60)
            try await portal.portal.runCleanup()  // the row is gone: only the cookie is left
            let sessions = try await portal.count("SELECT COUNT(*) AS n FROM sessions")
            XCTAssertEqual(sessions, 0)
            let page = try await officer.get("/")
            XCTAssertEqual(page.location, "/signin?expired=1")
            let signIn = try await officer.get(try XCTUnwrap(page.location))
            XCTAssertTrue(signIn.body.contains("Your session has expired."))
        }
    }

    func testHiddenCharactersInUsernamesAreRefusedBeforePAM() async throws {
        try await PortalHarness.run { portal in
            let hidden: [Unicode.Scalar] = ["\u{200B}", "\u{200F}", "\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{FEFF}"]
            for scalar in hidden {
                let page = try await portal.browser().signIn("tt-officer\(Character(scalar))", "Officer-Pass-1")
                XCTAssertEqual(page.status, .unauthorized, "U+\(String(scalar.value, radix: 16))")
            }
            // Refused before the throttle and PAM: no attempt was counted for any of these names.
            let counted = try await portal.count("SELECT COUNT(*) AS n FROM rate_slots WHERE rule = 'signin.fail.user'")
            XCTAssertEqual(counted, 0)
            let audits = try await portal.auditActions("signin")
            XCTAssertEqual(audits.count, hidden.count)
            XCTAssertTrue(audits.allSatisfy { $0.actor == "tt-officer?" }, "shown as '?', never as typed: \(audits.map(\.actor))")
            XCTAssertTrue(PAMAuthenticatorAccess.acceptsOrdinaryNames)
        }
    }

    func testAPreSessionCookieTheClientChoseIsReplaced() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let chosen = String(repeating: "ab", count: 32)
            browser.cookies[CSRF.preSessionCookie] = chosen
            _ = try await browser.get("/signin")
            XCTAssertNotEqual(browser.cookies[CSRF.preSessionCookie], chosen)
            let made = try XCTUnwrap(browser.cookies[CSRF.preSessionCookie])
            XCTAssertTrue(portal.portal.foundation.csrf.isServerMadePreSession(made))
            _ = try await browser.get("/signin")
            XCTAssertEqual(browser.cookies[CSRF.preSessionCookie], made, "the portal's own value is kept")
        }
    }
}

/// Ordinary names (letters of any script, digits, dots, @) still reach PAM.
enum PAMAuthenticatorAccess {
    static var acceptsOrdinaryNames: Bool {
        ["tt-officer", "jürgen.müller@amt.example", "ΑΒΓ", "user_1"].allSatisfy(PAMAuthenticator.isAcceptableUsername)
    }
}

extension Browser {
    /// Presses "Issue teleTAN" and returns the result page.
    func issueResultPage() async throws -> Page {
        let posted = try await pressIssue()
        XCTAssertEqual(posted.location, "/teletan/result")
        return try await get("/teletan/result")
    }
}

/// No teleTAN lost in the dark: one issued but never shown is offered on the start page, never
/// replaced by a second, and audited when its display time ends unseen.
final class WaitingTeleTANTests: XCTestCase {
    func testATeleTANWhoseRedirectWasNotFollowedIsOfferedOnce() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            let staleForm = ["csrf": home.hidden("csrf")!, "nonce": home.hidden("nonce")!]
            let posted = try await officer.pressIssue()  // the browser never follows this redirect
            XCTAssertEqual(posted.location, "/teletan/result")

            let offered = try await officer.get("/")
            XCTAssertTrue(offered.body.contains("id=\"teletan-waiting\""))
            XCTAssertTrue(offered.body.contains("id=\"show-waiting\""))
            XCTAssertFalse(offered.body.contains("id=\"issue-teletan\""), "no second teleTAN while one waits")

            // An issuing form still open in another tab does not replace it either.
            portal.clock.advance(seconds: 31)
            let second = try await officer.post("/teletan", staleForm)
            XCTAssertEqual(second.location, "/teletan/result")
            let teleTANs = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(teleTANs, 1)
            let reasons = try await portal.auditActions("teletan.issue").map { $0.detailValues["reason"] }
            XCTAssertEqual(reasons, [nil, "teletan_waiting"])

            let shown = try await officer.get("/teletan/result")
            XCTAssertNotNil(shown.teleTAN, "the waiting teleTAN is shown")
            let again = try await officer.get("/")
            XCTAssertFalse(again.body.contains("id=\"teletan-waiting\""), "offered once")
            XCTAssertTrue(again.body.contains("id=\"issue-teletan\""))
        }
    }

    func testATeleTANNeverShownIsAuditedWhenItsDisplayTimeEnds() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            _ = try await officer.pressIssue()
            let firstIssue = try await portal.auditActions("teletan.issue").first
            let issued = try XCTUnwrap(firstIssue)
            // Signing out does not discard it silently either.
            let signedOut = try await portal.signedIn(.hotline)
            _ = try await signedOut.pressIssue()
            _ = try await signedOut.post("/signout", ["csrf": try await signedOut.get("/").hidden("csrf")!])

            portal.clock.advance(seconds: 9 * 60)
            try await portal.portal.runCleanup()
            let tooEarly = try await portal.auditActions("teletan.expired_unshown").count
            XCTAssertEqual(tooEarly, 0, "still within the display time")
            portal.clock.advance(seconds: 2 * 60)
            try await portal.portal.runCleanup()
            try await portal.portal.runCleanup()  // a second instance's cleanup audits nothing twice
            let unshown = try await portal.auditActions("teletan.expired_unshown")
            XCTAssertEqual(Set(unshown.compactMap(\.actor)), ["tt-officer", "tt-hotline"])
            XCTAssertEqual(unshown.count, 2)
            XCTAssertTrue(unshown.contains { $0.subject == issued.subject }, "named by the issued teleTAN's fingerprint")
            let leftWaiting = try await portal.count("SELECT COUNT(*) AS n FROM pending_displays")
            XCTAssertEqual(leftWaiting, 0)
            let page = try await officer.get("/teletan/result")
            XCTAssertTrue(page.body.contains("id=\"already-shown\""))
        }
    }

    func testAResultPageOpenedAfterTheDisplayTimeAuditsTheTeleTANAsUnshown() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            _ = try await officer.pressIssue()
            portal.clock.advance(seconds: 11 * 60)
            let late = try await officer.get("/teletan/result")
            XCTAssertNil(late.teleTAN)
            let actors = try await portal.auditActions("teletan.expired_unshown").map(\.actor)
            XCTAssertEqual(actors, ["tt-officer"])
        }
    }
}
