import AsyncKit
import HTTPTypes
import Storage
import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb
import Issuance

/// Every route against every role: what the server does, whatever the page shows.
final class AuthorizationTests: XCTestCase {
    enum Who: CaseIterable { case anonymous, officer, hotline, event, admin, norole }

    /// Also checks that the matrix covers every route the router has: a new route fails this test
    /// until it is requested here for every role.
    func testEveryRouteAgainstEveryRole() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }) { portal in
            var requested: [Set<String>] = []
            for who in Who.allCases {
                let browser: Browser
                switch who {
                case .anonymous: browser = portal.browser()
                case .officer: browser = try await portal.signedIn(.officer)
                case .hotline: browser = try await portal.signedIn(.hotline)
                case .event: browser = try await portal.signedIn(.event)
                case .admin: browser = try await portal.signedIn(.admin)
                case .norole: browser = try await portal.signedIn(.norole)
                }
                // Hotline agents issue only within a call (below); every issuing role sees its own.
                let issuer = who == .officer
                let seesOwn = who == .officer || who == .hotline || who == .event
                let signedIn = who != .anonymous
                let label = "\(who)"

                let home = try await browser.get("/")
                if signedIn {
                    XCTAssertEqual(home.status, .ok, label)
                    XCTAssertEqual(home.body.contains("id=\"issue-teletan\""), issuer, label)
                    XCTAssertEqual(home.body.contains("id=\"no-role\""), who == .norole, label)
                } else {
                    XCTAssertEqual(home.location, "/signin", label)
                }
                let csrf = home.hidden("csrf") ?? "x"
                let nonce = home.hidden("nonce") ?? String(repeating: "0", count: 64)

                let issue = try await browser.post("/teletan", ["csrf": csrf, "nonce": nonce])
                let result = try await browser.get("/teletan/result")
                let done = try await browser.post("/teletan/done", ["csrf": csrf])
                for (page, route) in [(issue, "POST /teletan"), (result, "GET /teletan/result"), (done, "POST /teletan/done")] {
                    if !signedIn {
                        XCTAssertEqual(page.location, "/signin", "\(label) \(route)")
                    } else if issuer || (seesOwn && route != "POST /teletan") {
                        XCTAssertTrue([.ok, .seeOther].contains(page.status), "\(label) \(route): \(page.status)")
                    } else {
                        XCTAssertEqual(page.status, .forbidden, "\(label) \(route)")
                        XCTAssertTrue(page.body.contains("Not allowed"), "\(label) \(route)")
                    }
                }
                if issuer { XCTAssertNotNil(result.teleTAN, label) }

                // EVENT teleTANs, one's own teleTANs, the hotline: who may use each route (the ids
                // are made up, so an allowed request gets a 4xx of its own, never 403 or 500).
                let made = UUID().uuidString.lowercased()
                let issuers: Set<Who> = [.officer, .hotline, .event]
                let matrix: [(HTTPRequest.Method, String, Set<Who>)] = [
                    (.post, "/teletan/event", [.event]),
                    (.post, "/teletan/event/requests", [.event]),
                    (.post, "/teletan/event/requests/\(made)/approve", [.event]),
                    (.post, "/teletan/event/requests/\(made)/decline", [.event]),
                    (.post, "/teletan/event/requests/\(made)/issue", [.event]),
                    (.post, "/teletan/event/requests/\(made)/withdraw", [.event]),
                    (.get, "/teletan/recent", issuers),
                    (.get, "/teletan/recent/\(made)/revoke", issuers),
                    (.post, "/teletan/recent/\(made)/revoke", issuers),
                    (.get, "/hotline", [.hotline]),
                    (.post, "/hotline/calls", [.hotline]),
                    (.get, "/hotline/calls/\(made)", [.hotline]),
                    (.post, "/hotline/calls/\(made)/issue", [.hotline]),
                    (.post, "/hotline/calls/\(made)/callback", [.hotline]),
                    (.post, "/hotline/calls/\(made)/end", [.hotline]),
                    (.post, "/hotline/calls/\(made)/read-back", [.hotline]),
                    (.post, "/hotline/calls/\(made)/passed-on", [.hotline]),
                    (.get, "/hotline/callbacks", [.hotline]),
                    (.post, "/hotline/callbacks/\(made)/take", [.hotline]),
                    (.get, "/hotline/callbacks/\(made)", [.hotline]),
                    (.post, "/hotline/callbacks/\(made)/outcome", [.hotline]),
                    (.get, "/hotline/overview", [.hotline, .admin]),
                    (.get, "/admin/audit", [.admin]),
                    (.get, "/admin/audit?actor=tt-officer&before=5", [.admin]),
                    (.get, "/admin/audit/entries/1", [.admin]),
                    (.post, "/admin/audit/lookup", [.admin]),
                    (.get, "/admin/audit/teletans/\(String(repeating: "a", count: 64))", [.admin]),
                    (.post, "/admin/audit/verify", [.admin]),
                    (.get, "/admin/audit/export.csv", [.admin]),
                    (.get, "/admin/audit/export.jsonl", [.admin]),
                    (.get, "/admin/audit/charts", [.admin]),
                    (.get, "/admin/sessions", [.admin]),
                    (.post, "/admin/sessions/end", [.admin]),
                    (.get, "/admin/lockouts", [.admin]),
                    (.post, "/admin/lockouts/lift", [.admin]),
                    (.get, "/admin/quota", [.admin]),
                    (.post, "/admin/quota", [.admin]),
                ]
                for (method, path, allowed) in matrix {
                    let page = method == .get ? try await browser.get(path) : try await browser.post(path, ["csrf": csrf, "nonce": nonce])
                    let route = "\(label) \(method) \(path)"
                    if !signedIn {
                        XCTAssertEqual(page.location, "/signin", route)
                    } else if allowed.contains(who) {
                        XCTAssertNotEqual(page.status, .forbidden, route)
                        XCTAssertLessThan(page.status.code, 500, route)
                        XCTAssertNotEqual(page.location, "/signin", route)
                    } else {
                        XCTAssertEqual(page.status, .forbidden, route)
                        XCTAssertTrue(page.body.contains("Not allowed"), route)
                    }
                }

                let signin = try await browser.get("/signin")
                XCTAssertEqual(signin.status, signedIn ? .seeOther : .ok, label)
                // Sign-in steps are open to everyone; without a waiting conversation there is nothing to continue.
                let step = try await browser.post("/signin/continue", ["csrf": signin.hidden("csrf") ?? "x", "answer": "1"])
                XCTAssertTrue([.unauthorized, .forbidden].contains(step.status), "\(label) POST /signin/continue: \(step.status)")
                let wrongSignIn = try await browser.post("/signin", ["username": "tt-nobody", "password": "x", "csrf": signin.hidden("csrf") ?? "x"])
                XCTAssertTrue([.unauthorized, .forbidden].contains(wrongSignIn.status), "\(label) POST /signin: \(wrongSignIn.status)")
                let language = try await browser.get("/language/en")
                XCTAssertEqual(language.location, "/", label)
                for path in ["/health/live", "/health/ready", "/css/portal.css", "/js/portal.js"] {
                    let page = try await browser.get(path)
                    XCTAssertEqual(page.status, .ok, "\(label) \(path)")
                }
                let missing = try await browser.get("/admin/anything")
                XCTAssertEqual(missing.status, .notFound, label)

                let signout = try await browser.post("/signout", ["csrf": csrf])
                XCTAssertEqual(signout.location, signedIn ? "/signin?signedout=1" : "/signin", label)
                requested.append(Set(browser.requested))
            }
            let denied = try await portal.auditActions("access.denied")
            XCTAssertEqual(Set(denied.compactMap(\.actor)), ["tt-officer", "tt-hotline", "tt-event", "tt-admin", "tt-norole"])

            let routes = portal.portal.makeRoutes().router.routes
            XCTAssertGreaterThan(routes.count, 10)
            for route in routes {
                let covered = requested.map { paths in
                    paths.contains { Self.request($0, matches: route.method, route.path.description) }
                }
                XCTAssertEqual(covered, Array(repeating: true, count: Who.allCases.count),
                               "\(route.method) \(route.path) is not requested for every role")
            }
        }
    }

    /// Whether a recorded "METHOD /path?query" is a request for the route `template`
    /// (`/language/{code}` stands for any one segment).
    static func request(_ recorded: String, matches method: HTTPRequest.Method, _ template: String) -> Bool {
        let parts = recorded.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0] == method.rawValue else { return false }
        let path = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let expected = template.split(separator: "/", omittingEmptySubsequences: false)
        return segments.count == expected.count
            && zip(segments, expected).allSatisfy { $1.hasPrefix("{") || $0 == $1 }
    }

    func testCSRFIsRequiredOnEveryForm() async throws {
        try await PortalHarness.run { portal in
            let anonymous = portal.browser()
            _ = try await anonymous.get("/signin")
            let noToken = try await anonymous.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": "forged"])
            XCTAssertEqual(noToken.status, .forbidden)
            let noCookie = portal.browser()
            let form = try await anonymous.get("/signin")
            let stolenToken = try await noCookie.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": form.hidden("csrf")!])
            XCTAssertEqual(stolenToken.status, .forbidden, "the token is bound to the pre-session cookie")

            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            let issue = try await officer.post("/teletan", ["csrf": String(repeating: "0", count: 64), "nonce": home.hidden("nonce")!])
            XCTAssertEqual(issue.status, .forbidden)
            let other = try await portal.signedIn(.hotline)
            let othersToken = try await other.get("/").hidden("csrf")!
            let crossSession = try await officer.post("/teletan", ["csrf": othersToken, "nonce": home.hidden("nonce")!])
            XCTAssertEqual(crossSession.status, .forbidden, "a token of another session does not work")
            let signout = try await officer.post("/signout", ["csrf": "nope"])
            XCTAssertEqual(signout.status, .forbidden)
            let done = try await officer.post("/teletan/done", ["csrf": "nope"])
            XCTAssertEqual(done.status, .forbidden)
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 0)
        }
    }

    func testCrossSiteRequestsAreRefusedBeforeAnyHandler() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let home = try await officer.get("/")
            let form = ["csrf": home.hidden("csrf")!, "nonce": home.hidden("nonce")!]
            let fetchSite = try await officer.post("/teletan", form, headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            XCTAssertEqual(fetchSite.status, .forbidden)
            let origin = try await officer.post("/teletan", form, headers: [.origin: "https://evil.example"])
            XCTAssertEqual(origin.status, .forbidden)
            let sameOrigin = try await officer.post("/teletan", form, headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            XCTAssertEqual(sameOrigin.status, .seeOther)
            // Sign-in and sign-out forms are covered the same way: a cross-site sign-out would
            // end the officer's session, a cross-site sign-in would log in as someone else.
            let csrf = home.hidden("csrf")!
            for site in ["cross-site", "same-site"] {
                let signout = try await officer.post("/signout", ["csrf": csrf], headers: [HTTPField.Name("Sec-Fetch-Site")!: site])
                XCTAssertEqual(signout.status, .forbidden, site)
            }
            let evilSignout = try await officer.post("/signout", ["csrf": csrf], headers: [.origin: "http://evil.example"])
            XCTAssertEqual(evilSignout.status, .forbidden)
            let stillSignedIn = try await officer.get("/")
            XCTAssertEqual(stillSignedIn.status, .ok, "still signed in")
            let stranger = portal.browser()
            let signinForm = try await stranger.get("/signin")
            let crossSignin = try await stranger.post(
                "/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": signinForm.hidden("csrf")!],
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            XCTAssertEqual(crossSignin.status, .forbidden)
            let signIns = try await portal.auditActions("signin")
            XCTAssertEqual(signIns.count, 0, "refused before PAM and before the audit")
        }
    }

    func testStaticFilesRefuseNULAndIgnoreRange() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            for path in ["/js/portal.js%00.html", "/css/portal.css%00"] {
                let page = try await browser.get(path)
                XCTAssertEqual(page.status, .badRequest, path)
            }
            let whole = try await browser.get("/css/portal.css")
            // Pages name the files with a digest of their content, so a deploy reaches cached browsers.
            let page = try await browser.get("/signin")
            let versioned = try XCTUnwrap(page.body.firstMatch(of: /href="(\/css\/portal\.css\?v=[0-9a-f]{12})"/)?.output.1)
            let fetched = try await browser.get(String(versioned))
            XCTAssertEqual(fetched.body, whole.body)
            XCTAssertTrue(page.body.contains("/js/portal.js?v="))
            for range in ["bytes=999999-", "bytes=-0", "bytes=-10", "bytes=0-3"] {
                let page = try await browser.get("/css/portal.css", headers: [.range: range])
                XCTAssertEqual(page.status, .ok, range)
                XCTAssertEqual(page.body, whole.body, range)
            }
        }
    }

    func testOriginMustBeThePublicOrigin() throws {
        let portal = try XCTUnwrap(PublicOrigin("https://portal.example.org"))
        XCTAssertTrue(portal.matches(origin: "https://portal.example.org"))
        XCTAssertTrue(portal.matches(origin: "https://Portal.Example.org:443"))
        XCTAssertFalse(portal.matches(origin: "http://portal.example.org"), "another scheme is another origin")
        XCTAssertFalse(portal.matches(origin: "https://portal.example.org:8443"))
        XCTAssertFalse(portal.matches(origin: "https://portal.example.org.evil.example"))
        XCTAssertFalse(portal.matches(origin: "https://evil.example/portal.example.org"))
        XCTAssertFalse(portal.matches(origin: "null"))
        XCTAssertFalse(portal.matches(origin: "ftp://portal.example.org"))
        XCTAssertTrue(portal.matches(authority: "portal.example.org"))
        XCTAssertTrue(portal.matches(authority: "PORTAL.example.org:443"))
        XCTAssertFalse(portal.matches(authority: "portal.example.org:8080"))
        XCTAssertFalse(portal.matches(authority: "127.0.0.1"))
        let local = try XCTUnwrap(PublicOrigin("http://127.0.0.1:8080/"))
        XCTAssertTrue(local.matches(authority: "127.0.0.1:8080"))
        XCTAssertTrue(local.matches(origin: "http://127.0.0.1:8080"))
        XCTAssertFalse(local.matches(authority: "localhost:8080"), "a rebound name is not this host")
        // Internationalised names as browsers send them (punycode); IPv6 in brackets.
        let idn = try XCTUnwrap(PublicOrigin("https://bücher.example"))
        XCTAssertTrue(idn.matches(authority: "xn--bcher-kva.example"))
        XCTAssertTrue(try XCTUnwrap(PublicOrigin("http://[::1]:8080")).matches(authority: "[::1]:8080"))
        XCTAssertEqual(PortalConfiguration.listenerOrigin(host: "[::1]", port: 8080), PublicOrigin("http://[::1]:8080"))
        XCTAssertEqual(PortalConfiguration.listenerOrigin(host: "::1", port: 8080), PublicOrigin("http://[::1]:8080"))
        for bad in ["portal.example.org", "https://portal.example.org/path", "https://user@portal.example.org", "mailto:x@y", "",
                    "https://portal.example.org:0", "https://portal.example.org:99999"] {
            XCTAssertNil(PublicOrigin(bad), bad)
        }
    }

    func testSecurityHeadersAndTLSBehindAProxy() async throws {
        try PortalHarness.requirePAMStack()
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let plain = try await browser.get("/signin")
            let csp = try XCTUnwrap(plain.headers[.contentSecurityPolicy])
            XCTAssertTrue(csp.contains("frame-ancestors 'none'"))
            XCTAssertTrue(csp.contains("script-src 'self'"))
            XCTAssertFalse(csp.contains("unsafe-inline"))
            XCTAssertEqual(plain.headers[.xContentTypeOptions], "nosniff")
            XCTAssertEqual(plain.headers[HTTPField.Name("Referrer-Policy")!], "no-referrer")
            XCTAssertEqual(plain.headers[.cacheControl], "no-store")
            XCTAssertNil(plain.headers[.strictTransportSecurity])
            XCTAssertFalse(plain.body.contains("<script>"), "no inline script")
            XCTAssertFalse(plain.body.contains("style="), "no inline style")

            let tls = portal.browser()
            tls.extraHeaders[HTTPField.Name("X-Forwarded-Proto")!] = "https"
            let secure = try await tls.get("/signin")
            XCTAssertNotNil(secure.headers[.strictTransportSecurity])
            XCTAssertTrue(secure.headers[values: .setCookie].allSatisfy { $0.contains("Secure") })
            let signedIn = try await tls.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": secure.hidden("csrf")!])
            XCTAssertTrue(signedIn.headers[values: .setCookie].first { $0.hasPrefix("portal_session=") }?.contains("Secure") ?? false)
        }
    }

    struct Boom: Error {}

    func testErrorPagesInBothLanguages() async throws {
        try await PortalHarness.run(extraRoutes: { router in
            router.get("/test/crash") { _, _ -> Response in throw Boom() }
            router.get("/test/unavailable") { _, _ -> Response in throw IssuanceError.serviceUnavailable }
            router.get("/test/limited") { _, _ -> Response in throw IssuanceError.tooManyRequests(retryAfterSeconds: 7, global: false) }
            router.get("/test/busy") { _, _ -> Response in throw ConnectionPoolTimeoutError.connectionRequestTimeout }
        }) { portal in
            let english = portal.browser()
            let german = portal.browser()
            german.extraHeaders[.acceptLanguage] = "de"
            let cases: [(String, HTTPResponse.Status, String, String)] = [
                ("/nowhere", .notFound, "Not found", "Nicht gefunden"),
                ("/test/crash", .internalServerError, "Something went wrong", "Etwas ist schiefgegangen"),
                ("/test/unavailable", .serviceUnavailable, "Service unavailable", "Dienst nicht verfügbar"),
                ("/test/limited", .tooManyRequests, "Please wait", "Bitte warten"),
                // No database connection free in time: busy, not broken.
                ("/test/busy", .serviceUnavailable, "Service unavailable", "Dienst nicht verfügbar"),
            ]
            for (path, status, en, de) in cases {
                let pageEN = try await english.get(path)
                let pageDE = try await german.get(path)
                XCTAssertEqual(pageEN.status, status, path)
                XCTAssertEqual(pageDE.status, status, path)
                XCTAssertTrue(pageEN.body.contains(en), path)
                XCTAssertTrue(pageDE.body.contains(de), path)
            }
            let busy = try await english.get("/test/busy")
            XCTAssertEqual(busy.headers[.retryAfter], "5")
            let form = try await english.get("/signin")
            let missingField = try await english.post("/signin", ["csrf": form.hidden("csrf")!])
            XCTAssertEqual(missingField.status, .badRequest)
            XCTAssertTrue(missingField.body.contains("Bad request"))
            let forbidden = try await german.post("/signin", ["username": "a", "password": "b", "csrf": "c"])
            XCTAssertEqual(forbidden.status, .forbidden)
            XCTAssertTrue(forbidden.body.contains("Nicht erlaubt"))
            let huge = try await english.post("/signin", ["username": String(repeating: "a", count: 40_000), "password": "b", "csrf": "c"])
            XCTAssertEqual(huge.status, .contentTooLarge)
            let malformed = try await english.send("/signin", method: .post, body: ByteBuffer(string: "%%%=&&=%zz"),
                                                   headers: [.contentType: "application/x-www-form-urlencoded"])
            XCTAssertTrue([.badRequest, .forbidden].contains(malformed.status), "\(malformed.status)")

            // Signed in, error pages show who is signed in and how to sign out; signed out, they
            // do not. ("Not found" is answered outside the session lookup, after the static files.)
            let signOutButton = "id=\"signout\""
            let anonymousPage = try await english.get("/nowhere")
            XCTAssertFalse(anonymousPage.body.contains(signOutButton))
            let officer = try await portal.signedIn(.officer)
            for path in ["/test/crash", "/test/limited", "/test/unavailable"] {
                let page = try await officer.get(path)
                XCTAssertTrue(page.body.contains("Signed in as <strong>\(Account.officer.rawValue)</strong>"), path)
                XCTAssertTrue(page.body.contains(signOutButton), path)
            }
            let wrongMethod = try await officer.send("/teletan", method: .put, body: nil, headers: [:])
            XCTAssertEqual(wrongMethod.status, .methodNotAllowed)
            XCTAssertTrue(wrongMethod.body.contains(signOutButton))
        }
    }

    func testLanguageSwitchAndNoOpenRedirect() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let switched = try await browser.get("/language/de")
            XCTAssertEqual(switched.location, "/")
            XCTAssertEqual(browser.cookies["portal_lang"], "de")
            let form = try await browser.get("/signin")
            XCTAssertTrue(form.body.contains(">Benutzername<") && form.body.contains(">Anmelden<"))
            let evil = try await browser.get("/language/en?back=//evil.example/")
            XCTAssertEqual(evil.location, "/")
            let local = try await browser.get("/language/en?back=/signin")
            XCTAssertEqual(local.location, "/signin")
            let unknown = try await browser.get("/language/fr")
            XCTAssertEqual(unknown.status, .notFound)
            // Browsers drop tabs and newlines from a URL: "/<TAB>/evil.example" is "//evil.example".
            for trick in ["/%09/evil.example/", "/%0A/evil.example/", "/%0D%0A/evil.example/", "/%5C/evil.example/",
                          "https://evil.example/", "/%E3%80%80/evil.example", "%2F%2Fevil.example"] {
                let page = try await browser.get("/language/en?back=\(trick)")
                XCTAssertEqual(page.location, "/", trick)
            }
            let withQuery = try await browser.get("/language/en?back=/signin%3Fexpired%3D1")
            XCTAssertEqual(withQuery.location, "/signin?expired=1")
        }
    }

    /// `back` (issue 28, item 5): only a path of this site, normalised: dot segments resolved
    /// (also percent-encoded ones, which browsers resolve too), duplicate slashes folded, never
    /// above the root; the query kept as it is. Anything else goes to the start page.
    func testLanguageSwitchNormalisesItsBackPath() async throws {
        let cases: [(back: String, location: String)] = [
            ("/signin", "/signin"), ("/admin//audit", "/admin/audit"), ("/a/./b/../../signin", "/signin"),
            ("/./signin", "/signin"), ("/a/b/..", "/a/"), ("/..", "/"), ("/.", "/"), ("/admin/", "/admin/"),
            ("/../..//evil.example", "/evil.example"), ("/.//evil.example/", "/evil.example/"),
            ("/a/..//evil.example", "/evil.example"), ("/%2e%2e/%2E%2e//evil.example", "/evil.example"),
            ("/.%2e/x", "/x"), ("/%2e/x", "/x"), ("/x///", "/x/"),
            ("/admin/audit?actor=/../x&action=a//b", "/admin/audit?actor=/../x&action=a//b"),
            ("/a/../b?c=d#e", "/b?c=d#e"),
            ("//evil.example", "/"), ("///evil.example", "/"), ("/\\evil.example", "/"), ("\\/evil.example", "/"),
            ("/x\\y", "/"), ("/\r\nSet-Cookie: a=b", "/"), ("/x\ny", "/"), ("/x\u{0}", "/"), ("", "/"),
            ("evil.example", "/"), ("https://evil.example/", "/"), ("javascript:alert(1)", "/"), ("/é", "/"),
        ]
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            for (back, location) in cases {
                let encoded = back.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let page = try await browser.get("/language/en?back=\(encoded)")
                XCTAssertEqual(page.status, .seeOther, back)
                XCTAssertEqual(page.location, location, back)
            }
        }
    }

    func testWrongMethodGets405WithAllowAndHeadIsSafe() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }) { portal in
            let anonymous = portal.browser()
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.put, "/", "GET, HEAD"), (.delete, "/teletan", "POST"), (.get, "/teletan", "POST"),
                (.options, "/signin", "GET, HEAD, POST"), (.patch, "/language/de", "GET, HEAD"),
                (.head, "/signout", "POST"), (.trace, "/health/live", "GET, HEAD"),
            ]
            for (method, path, allow) in cases {
                let page = try await anonymous.send(path, method: method, body: nil, headers: [:])
                XCTAssertEqual(page.status, .methodNotAllowed, "\(method) \(path)")
                XCTAssertEqual(page.headers[.allow], allow, "\(method) \(path)")
                if method != .head { XCTAssertTrue(page.body.contains("Not possible here"), "\(method) \(path)") }
            }
            let german = try await anonymous.send("/teletan/done", method: .put, body: nil, headers: [.acceptLanguage: "de"])
            XCTAssertEqual(german.status, .methodNotAllowed)
            XCTAssertTrue(german.body.contains("Hier nicht möglich"))
            let unknownPath = try await anonymous.send("/nothing", method: .put, body: nil, headers: [:])
            XCTAssertEqual(unknownPath.status, .notFound)
            let probe = try await anonymous.send("/health/live", method: .head, body: nil, headers: [:])
            XCTAssertEqual(probe.status, .ok)
            XCTAssertEqual(probe.body, "")

            // A HEAD does not use up the one showing of a teleTAN.
            let officer = try await portal.signedIn(.officer)
            let headHome = try await officer.send("/", method: .head, body: nil, headers: [:])
            XCTAssertEqual(headHome.status, .ok)
            let issued = try await officer.pressIssue()
            XCTAssertEqual(issued.status, .seeOther)
            let headResult = try await officer.send("/teletan/result", method: .head, body: nil, headers: [:])
            XCTAssertEqual(headResult.status, .ok)
            XCTAssertEqual(headResult.body, "")
            let shown = try await officer.get("/teletan/result")
            XCTAssertNotNil(shown.teleTAN)
            let again = try await officer.get("/teletan/result")
            XCTAssertNil(again.teleTAN)
        }
    }

    func testHealthAndMetrics() async throws {
        try PortalHarness.requirePAMStack()
        try await PortalHarness.run { portal in
            let officer = try await portal.signedInThroughPAM(.officer)
            _ = try await officer.issueTeleTAN()
            _ = try await portal.browser().signIn("tt-officer", "wrong")
            let live = try await officer.get("/health/live")
            let ready = try await officer.get("/health/ready")
            XCTAssertEqual(live.body, "ok\n")
            XCTAssertEqual(ready.body, "ok\n")
            let onPublicListener = try await officer.get("/metrics")
            XCTAssertEqual(onPublicListener.status, .notFound, "metrics only on their own listener")
            let metrics = try await portal.metrics()
            XCTAssertTrue(metrics.contains("portal_http_requests_total"))
            XCTAssertTrue(metrics.contains(#"portal_signins_total{outcome="success"} 1"#), metrics)
            XCTAssertTrue(metrics.contains(#"portal_signins_total{outcome="authentication_failed"} 1"#), metrics)
            XCTAssertTrue(metrics.contains(#"portal_teletans_issued_total{type="TEST"} 1"#), metrics)
        }
    }
}
