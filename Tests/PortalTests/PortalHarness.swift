import AccessControl
import Audit
import FluentKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Storage
import Synchronization
import TestSupport
import Verification
import XCTest
@testable import Portal
@testable import PortalWeb

/// Builds the real portal (real database; PAM where a test signs in through it) for each test
/// database and hands the test a ``TestPortal`` with browsers that keep cookies like a real one.
/// Feature tests sign in through ``TestPortal/signedIn(_:address:)``, which makes the session
/// directly, so that they run without the root-installed PAM test stack; sign-in tests use
/// ``TestPortal/signedInThroughPAM(_:address:)`` and call ``PortalHarness/requirePAMStack()``.
enum PortalHarness {
    static func run(
        configure: (inout PortalConfiguration) -> Void = { _ in },
        extraRoutes: (Router<PortalRequestContext>) -> Void = { _ in },
        verification: (any VerificationService)? = nil,
        certs: CertsRoute? = nil,
        prepareDatabase: (DatabaseLocation) async throws -> Void = { _ in },
        logger: Logger = TestDatabases.testLogger,
        _ body: @Sendable @escaping (TestPortal) async throws -> Void
    ) async throws {
        try await TestDatabases.forEach { location in
            try await prepareDatabase(location)
            let clock = TestClock()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portal-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var config = PortalConfiguration()
            config.database = location
            config.secretFile = directory.appendingPathComponent("secret").path
            config.auditCheckpointKey = directory.appendingPathComponent("audit-checkpoint-key.pem").path
            config.pamService = "teletan-portal-test"
            config.trustProxy = true
            // The test client names this host (HummingbirdTesting's router mode).
            config.publicURL = "http://localhost"
            // Failed sign-ins answer at once here (hundreds of them); the real floor is measured
            // on a running portal by Tests/security/test_signin_timing.py.
            config.signInFailureTime = .zero
            configure(&config)
            let portal = try await PortalApp(
                configuration: config, logger: logger, verification: verification, certs: certs, now: clock.function)
            let router = portal.makeRouter()
            extraRoutes(router)
            do {
                try await Application(router: router, logger: logger).test(.router) { client in
                    try await body(TestPortal(portal: portal, client: client, clock: clock, location: location))
                }
            } catch {
                await portal.shutdown()
                throw error
            }
            await portal.shutdown()
        }
    }

    static func requirePAMStack() throws {
        guard FileManager.default.fileExists(atPath: "/etc/pam.d/teletan-portal-test") else {
            if ProcessInfo.processInfo.environment["PORTAL_PAM_TESTS"] == "1" {
                XCTFail("PORTAL_PAM_TESTS=1 but the PAM test stack is missing (scripts/install-pam-stack.sh)")
            }
            throw XCTSkip("PAM test stack not installed; run scripts/install-pam-stack.sh as root")
        }
    }
}

/// Test accounts from scripts/install-pam-stack.sh.
enum Account: String, CaseIterable {
    case officer = "tt-officer", hotline = "tt-hotline", event = "tt-event", admin = "tt-admin", norole = "tt-norole"

    var password: String {
        switch self {
        case .officer: "Officer-Pass-1"
        case .hotline: "Hotline-Pass-1"
        case .event: "Event-Pass-1"
        case .admin: "Admin-Pass-1"
        case .norole: "Norole-Pass-1"
        }
    }

    /// The roles its Unix group grants (scripts/install-pam-stack.sh).
    var roles: Set<Role> {
        switch self {
        case .officer: [.officer]
        case .hotline: [.hotline]
        case .event: [.event]
        case .admin: [.admin]
        case .norole: []
        }
    }
}

struct TestPortal: Sendable {
    let portal: PortalApp
    let client: any TestClientProtocol
    let clock: TestClock
    let location: DatabaseLocation

    func browser(address: String = "198.51.100.7") -> Browser {
        Browser(client: client, address: address)
    }

    /// A browser with a session for `account` (its username and its groups' roles), made
    /// directly in the session store: no PAM, no sign-in audit entry.
    func signedIn(_ account: Account, address: String = "198.51.100.7") async throws -> Browser {
        try await session(username: account.rawValue, roles: account.roles, address: address)
    }

    /// A browser with a session for any name and roles, made directly in the session store.
    func session(username: String, roles: Set<Role>, address: String = "198.51.100.7") async throws -> Browser {
        let (cookieValue, _) = try await portal.foundation.sessions.create(username: username, roles: roles, address: address, now: clock.now, on: db)
        let browser = browser(address: address)
        browser.cookies[SessionMiddleware.cookieName] = cookieValue
        return browser
    }

    /// A browser signed in through the sign-in form and the real PAM test stack.
    func signedInThroughPAM(_ account: Account, address: String = "198.51.100.7") async throws -> Browser {
        try PortalHarness.requirePAMStack()
        let browser = browser(address: address)
        let page = try await browser.signIn(account.rawValue, account.password)
        XCTAssertEqual(page.status, .seeOther, "sign-in of \(account.rawValue)")
        // The start page, or where the session starts for a hotline agent (HotlineFeature.landing).
        let landing = page.location ?? ""
        XCTAssertTrue(["/", "/hotline"].contains(landing) || landing.hasPrefix("/hotline/calls/"), landing)
        return browser
    }

    var db: any FluentKit.Database { portal.database.database(logger: TestDatabases.testLogger) }

    /// What the metrics listener (`--metrics-port`) answers to `GET /metrics`.
    func metrics() async throws -> String {
        try await Application(router: portal.makeMetricsRouter()).test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
        }
    }

    func count(_ sqlText: String) async throws -> Int {
        struct Row: Decodable { let n: Int }
        return try await sql(db).raw("\(unsafeRaw: sqlText)").first(decoding: Row.self)?.n ?? -1
    }

    func auditActions(_ action: String) async throws -> [Audit.AuditEntry] {
        try await Audit.AuditEntry.query(on: db).filter(\.$action == action).sort(\.$id).all()
    }
}

/// A cookie-keeping client, as a browser would be, behind a trusted proxy that reports `address`.
final class Browser: @unchecked Sendable {
    struct Page {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: String
        var location: String? { headers[.location] }

        func hidden(_ name: String) -> String? {
            body.firstMatch(of: try! Regex("name=\"\(name)\" value=\"([^\"]*)\""))
                .map { String($0.output[1].substring ?? "") }
        }

        /// The teleTAN on a result page: the text of `#teletan` without white space.
        var teleTAN: String? {
            guard let start = body.range(of: "id=\"teletan\"") else { return nil }
            let rest = body[start.upperBound...]
            guard let end = rest.range(of: "</p>") else { return nil }
            return rest[..<end.lowerBound].matches(of: /<span class="group">([^<]+)<\/span>/).map { String($0.output.1) }.joined()
        }
    }

    let client: any TestClientProtocol
    let address: String
    /// Tests send from one browser in parallel (double submits): its state is behind a lock.
    private struct State {
        var cookies: [String: String] = [:]
        var extraHeaders = HTTPFields()
        var requested: [String] = []
    }
    private let state = Mutex(State())
    var cookies: [String: String] {
        get { state.withLock { $0.cookies } }
        set { state.withLock { $0.cookies = newValue } }
    }
    var extraHeaders: HTTPFields {
        get { state.withLock { $0.extraHeaders } }
        set { state.withLock { $0.extraHeaders = newValue } }
    }
    /// "METHOD /path?query" of every request this browser sent.
    var requested: [String] { state.withLock { $0.requested } }

    init(client: any TestClientProtocol, address: String) {
        self.client = client
        self.address = address
    }

    func get(_ path: String, headers: HTTPFields = [:]) async throws -> Page {
        try await send(path, method: .get, body: nil, headers: headers)
    }

    func post(_ path: String, _ form: [String: String], headers: HTTPFields = [:]) async throws -> Page {
        let body = form.map { "\($0.key)=\(Self.encode($0.value))" }.joined(separator: "&")
        var all = headers
        all[.contentType] = "application/x-www-form-urlencoded"
        return try await send(path, method: .post, body: ByteBuffer(string: body), headers: all)
    }

    func send(_ path: String, method: HTTPRequest.Method, body: ByteBuffer?, headers: HTTPFields) async throws -> Page {
        var all = state.withLock { state in
            state.requested.append("\(method.rawValue) \(path)")
            var all = state.extraHeaders
            if !state.cookies.isEmpty {
                all[.cookie] = state.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            }
            return all
        }
        all.append(contentsOf: headers)
        all[HTTPField.Name("X-Forwarded-For")!] = address
        let response = try await client.executeRequest(uri: path, method: method, headers: all, body: body)
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            state.withLock { $0.cookies[name] = header.contains("Max-Age=0") || value.isEmpty ? nil : value }
        }
        return Page(status: response.status, headers: response.headers, body: String(buffer: response.body))
    }

    func signIn(_ username: String, _ password: String) async throws -> Page {
        let form = try await get("/signin")
        return try await post("/signin", ["username": username, "password": password, "csrf": form.hidden("csrf") ?? ""])
    }

    /// Loads the start page and submits its issuing form; returns the POST's response.
    @discardableResult
    func pressIssue() async throws -> Page {
        let home = try await get("/")
        return try await post("/teletan", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? ""])
    }

    /// Issues a teleTAN the way an officer does and returns what the result page showed.
    func issueTeleTAN() async throws -> String? {
        try await issueResultPage()?.teleTAN
    }

    /// Presses "Issue teleTAN" and returns the result page (nil if issuing was refused).
    func issueResultPage() async throws -> Page? {
        let posted = try await pressIssue()
        guard posted.status == .seeOther else { return nil }
        return try await get("/teletan/result")
    }

    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
