import AccessControl
import Foundation
import HTTPTypes
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb

/// Every signed-in POST route the features declare, posted by a user the route admits but
/// without the session's CSRF token, with another session's token, and from another site: each is
/// the localised 403 page, and nothing is written. A route whose handler would run unchecked
/// fails here, whatever its form holds.
final class FormRouteTests: XCTestCase {
    func testEverySignedInPostRouteRefusesForgedForms() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }) { portal in
            let (_, routes) = portal.portal.makeRoutes()
            let forms = routes.declarations.filter { $0.method == .post && $0.access != .public }
            XCTAssertGreaterThan(forms.count, 20)
            let othersToken = try await portal.signedIn(.norole).get("/").hidden("csrf")
            let foreignToken = try XCTUnwrap(othersToken)
            var browsers: [Account: Browser] = [:]
            for declaration in forms {
                let label = "POST \(declaration.path) (\(declaration.access))"
                let account = try XCTUnwrap(Account.allCases.first { declaration.access.admits($0.roles) }, label)
                let browser: Browser
                if let known = browsers[account] {
                    browser = known
                } else {
                    browser = try await portal.signedIn(account)
                    browsers[account] = browser
                }
                let home = try await browser.get("/")
                let ownToken = try XCTUnwrap(home.hidden("csrf"), label)
                let path = declaration.path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix("{") ? UUID().uuidString : String($0) }.joined(separator: "/")
                let rowsBefore = try await portal.count("SELECT COUNT(*) AS n FROM audit_log")

                let noToken = try await browser.post(path, ["nonce": "x"])
                XCTAssertEqual(noToken.status, .forbidden, "without a token: \(label)")
                XCTAssertTrue(noToken.body.contains("the form has expired"), "the localised 403 page: \(label)")
                let foreign = try await browser.post(path, ["csrf": foreignToken, "nonce": "x"], headers: [.acceptLanguage: "de"])
                XCTAssertEqual(foreign.status, .forbidden, "another session's token: \(label)")
                XCTAssertTrue(foreign.body.contains("das Formular ist abgelaufen"), "the German 403 page: \(label)")
                let crossSite = try await browser.post(path, ["csrf": ownToken, "nonce": "x"], headers: [.origin: "https://evil.example"])
                XCTAssertEqual(crossSite.status, .forbidden, "from another origin: \(label)")

                let rowsAfter = try await portal.count("SELECT COUNT(*) AS n FROM audit_log")
                XCTAssertEqual(rowsAfter, rowsBefore, "nothing written: \(label)")
                let stillSignedIn = try await browser.get("/")
                XCTAssertEqual(stillSignedIn.status, .ok, "still signed in: \(label)")
            }
        }
    }
}
