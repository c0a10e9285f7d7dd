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

    func testAnHTTPSPublicURLMakesCookiesSecureWithoutAProxyHeader() async throws {
        try await PortalHarness.run(configure: { $0.publicURL = "https://localhost"; $0.trustProxy = false }) { portal in
            let page = try await portal.browser().get("/signin")
            let cookies = page.headers[values: .setCookie]
            XCTAssertFalse(cookies.isEmpty)
            XCTAssertTrue(cookies.allSatisfy { $0.contains("Secure") }, "\(cookies)")
            XCTAssertNotNil(page.headers[.strictTransportSecurity])
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
                ids.append(id)
            }
            // The id an error page shows is the one in the header.
            let missing = try await browser.get("/nope")
            let shownID = try XCTUnwrap(missing.headers[HTTPField.Name("X-Request-ID")!])
            XCTAssertTrue(missing.body.contains("<code>\(shownID)</code>"))
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
            let landing = try await officer.get("/", headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            XCTAssertEqual(landing.status, .ok)
            XCTAssertTrue(landing.body.contains("id=\"teletan-waiting\""), "the start page offers it instead")
            let shown = try await officer.get("/teletan/result", headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            XCTAssertNotNil(shown.teleTAN, "still waiting after the cross-site link")
        }
    }

    func testValidUntilIsInTheAuthoritysTimeZoneWithItsName() async throws {
        // The test clock starts at 2027-01-15 08:00 UTC; a TEST teleTAN is valid for an hour.
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let englishPage = try await officer.issueResultPage()
            let english = try XCTUnwrap(englishPage)
            XCTAssertTrue(english.body.contains("15 Jan 2027 at 10:00 CET"), String(english.body.firstMatch(of: /valid-until">[^<]*/)?.output ?? "none"))
            portal.clock.advance(seconds: 31)
            officer.cookies[Language.cookieName] = "de"
            let germanPage = try await officer.issueResultPage()
            let german = try XCTUnwrap(germanPage)
            XCTAssertTrue(german.body.contains("10:00 MEZ"), String(german.body.firstMatch(of: /valid-until">[^<]*/)?.output ?? "none"))
            XCTAssertFalse(german.body.contains("UTC"))
        }
        try await PortalHarness.run(configure: { $0.timeZone = TimeZone(identifier: "America/New_York")! }) { portal in
            let resultPage = try await portal.signedIn(.officer).issueResultPage()
            let page = try XCTUnwrap(resultPage)
            let shown = String(page.body.firstMatch(of: /valid-until">[^<]*/)?.output ?? "none")
            XCTAssertTrue(shown.contains("04:00 GMT-5") || shown.contains("04:00 EST"), shown)
        }
    }

    func testAFormWhoseTokenIsNoLongerGoodSaysItExpired() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let csrf = try await officer.get("/").hidden("csrf")!
            // A form of this very session, made longer ago than a nonce is good for.
            let foundation = portal.portal.foundation
            let sessionHash = foundation.hasher.hash(officer.cookies[SessionMiddleware.cookieName]!, for: .session)
            let old = foundation.nonces.make(
                sessionHash: sessionHash, now: portal.clock.now.addingTimeInterval(-foundation.nonces.lifetime.seconds - 60))
            let expired = try await officer.post("/teletan", ["csrf": csrf, "nonce": old])
            XCTAssertEqual(expired.status, .badRequest)
            XCTAssertTrue(expired.body.contains("This form has expired. Please reload the page"))
            XCTAssertFalse(expired.body.contains("already been shown"))
            let reason = try await portal.auditActions("teletan.issue").last?.detailValues["reason"]
            XCTAssertEqual(reason, "form_invalid")
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
            // The issue's list, and other invisible ones: word joiner, soft hyphen, variation
            // selector, Hangul filler, line separator.
            let hidden: [Unicode.Scalar] = ["\u{200B}", "\u{200F}", "\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{FEFF}",
                                           "\u{2060}", "\u{00AD}", "\u{FE0F}", "\u{3164}", "\u{2028}"]
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
            // Ordinary names (letters of any script, digits, dots, @) still reach PAM.
            for name in ["tt-officer", "jürgen.müller@amt.example", "ΑΒΓ", "user_1", "ñandú"] {
                XCTAssertTrue(PAMAuthenticator.isAcceptableUsername(name), name)
            }
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
            let signedOut = try await portal.session(username: "tt-officer-2", roles: [.officer])
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
            XCTAssertEqual(Set(unshown.compactMap(\.actor)), ["tt-officer", "tt-officer-2"])
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

    func testAnExpiredTeleTANNotYetPurgedDoesNotBlockTheNextIssuance() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            _ = try await officer.pressIssue()  // never shown
            portal.clock.advance(seconds: 11 * 60)  // past the display time, before any cleanup
            let home = try await officer.get("/")
            XCTAssertTrue(home.body.contains("id=\"issue-teletan\""))
            let next = try await officer.issueTeleTAN()
            XCTAssertNotNil(next, "a new teleTAN, not 'already shown'")
            let unshown = try await portal.auditActions("teletan.expired_unshown")
            XCTAssertEqual(unshown.map(\.actor), ["tt-officer"], "the old one audited by the issuance that cleared it")
        }
    }

    func testAWaitingRowThatCannotBeOpenedIsStillPurgedAndAudited() async throws {
        try await PortalHarness.run { portal in
            // As after the secret file was replaced: the sealed text no longer opens.
            try await sql(portal.db).raw("""
                INSERT INTO pending_displays (session_hash, sealed, created_at)
                VALUES ('gone', 'bm90IHNlYWxlZA==', \(bind: portal.clock.now))
                """).run()
            portal.clock.advance(seconds: 11 * 60)
            try await portal.portal.runCleanup()
            let left = try await portal.count("SELECT COUNT(*) AS n FROM pending_displays")
            XCTAssertEqual(left, 0)
            let unshown = try await portal.auditActions("teletan.expired_unshown")
            XCTAssertEqual(unshown.map { $0.detailValues["reason"] }, ["unreadable"])
            XCTAssertNil(unshown.first?.subject)
        }
    }
}
