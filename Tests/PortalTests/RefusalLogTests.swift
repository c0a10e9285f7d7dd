import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb

/// Every 403 and 421 gets a log line that says why (docs/deployment.md section 10), naming the
/// headers and settings involved but never a token or cookie value.
final class RefusalLogTests: XCTestCase {
    private func refusals(_ log: LogRecorder) -> [[String: String]] {
        log.lines.filter { $0.message == "request refused" }.map(\.metadata)
    }

    func testA421SaysWhichHostCameAndWhichWasExpected() async throws {
        let log = LogRecorder()
        // The test client names "localhost" (no port): as nginx's `Host $host` drops the port.
        try await PortalHarness.run(configure: { $0.publicURL = "https://localhost:8443" }, logger: log.logger()) { portal in
            let page = try await portal.browser().get("/signin")
            XCTAssertEqual(page.status, .misdirectedRequest)
        }
        let refused = try XCTUnwrap(refusals(log).first)
        XCTAssertEqual(refused["status"], "421")
        XCTAssertEqual(refused["path"], "/signin")
        let reason = try XCTUnwrap(refused["reason"])
        XCTAssertTrue(reason.contains("Host 'localhost' is not the public host 'localhost:8443'"), reason)
    }

    func testA403ForAnotherOriginNamesItAndThePublicURL() async throws {
        let log = LogRecorder()
        try await PortalHarness.run(logger: log.logger()) { portal in
            let browser = portal.browser()
            let form = try await browser.get("/signin")
            let page = try await browser.post("/signin", ["username": "x", "password": "y", "csrf": form.hidden("csrf")!],
                                              headers: [.origin: "https://\u{E9}vil.example"])
            XCTAssertEqual(page.status, .forbidden)
        }
        let reason = try XCTUnwrap(refusals(log).first?["reason"])
        // Only printable ASCII of a header reaches the log (no forged lines, no odd bytes).
        XCTAssertTrue(reason.contains("Origin 'https://?vil.example' is not the public URL 'http://localhost'"), reason)
    }

    func testA403ForACrossSiteRequestSaysSo() async throws {
        let log = LogRecorder()
        try await PortalHarness.run(logger: log.logger()) { portal in
            let page = try await portal.browser().post("/signin", [:], headers: [.secFetchSite: "cross-site"])
            XCTAssertEqual(page.status, .forbidden)
        }
        XCTAssertEqual(refusals(log).first?["reason"], "cross-site request: Sec-Fetch-Site 'cross-site'")
    }

    func testA403ForTheFormTokenSaysMissingOrWrongWithoutTheToken() async throws {
        let log = LogRecorder()
        let secrets = Mutex<[String]>([])
        try await PortalHarness.run(logger: log.logger()) { portal in
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            let nonce = home.hidden("nonce")!
            let missing = try await officer.post("/teletan", ["nonce": nonce, "csrf": ""])
            XCTAssertEqual(missing.status, .forbidden)
            let wrong = try await officer.post("/teletan", ["nonce": nonce, "csrf": String(home.hidden("csrf")!.reversed())])
            XCTAssertEqual(wrong.status, .forbidden)

            // The sign-in form: without the pre-session cookie, and with a wrong token.
            let stranger = portal.browser()
            let bare = try await stranger.post("/signin", ["username": "tt-officer", "password": "pw", "csrf": "abc"])
            XCTAssertEqual(bare.status, .forbidden)
            let form = try await stranger.get("/signin")
            let forged = try await stranger.post("/signin", ["username": "tt-officer", "password": "pw", "csrf": String(form.hidden("csrf")!.reversed())])
            XCTAssertEqual(forged.status, .forbidden)
            secrets.withLock { $0 += [home.hidden("csrf")!, form.hidden("csrf")!] + Array(officer.cookies.values) + Array(stranger.cookies.values) }
        }
        // Four refusals for each test database (SQLite, and PostgreSQL when configured).
        let all = refusals(log).compactMap { $0["reason"] }
        guard !all.isEmpty, all.count % 4 == 0 else { return XCTFail("\(all)") }
        let reasons = Array(all.prefix(4))
        XCTAssertEqual(reasons[0], "CSRF token missing from the form")
        XCTAssertTrue(reasons[1].hasPrefix("CSRF token wrong: not the one of this session"), reasons[1])
        XCTAssertTrue(reasons[2].hasPrefix("sign-in form without the portal_presession cookie"), reasons[2])
        XCTAssertTrue(reasons[3].hasPrefix("CSRF token wrong: not the one of this portal_presession cookie"), reasons[3])
        let everything = log.lines.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        for secret in secrets.withLock({ $0 }) where secret.count >= 16 {
            XCTAssertFalse(everything.contains(secret), "a token or cookie value in the log")
            XCTAssertFalse(everything.contains(String(secret.reversed())), "a submitted token in the log")
        }
    }

    func testARoleRefusalSaysSo() async throws {
        let log = LogRecorder()
        try await PortalHarness.run(logger: log.logger()) { portal in
            let officer = try await portal.signedIn(.officer)
            let page = try await officer.get("/admin/audit")
            XCTAssertEqual(page.status, .forbidden)
        }
        XCTAssertEqual(refusals(log).first?["reason"], "the signed-in user's roles do not include this page")
    }
}
