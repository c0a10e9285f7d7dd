import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import Storage
import TeleTAN
import TestSupport
import Verification
import VerificationServer
import XCTest
@testable import Portal
import Issuance
import SQLKit
import VerificationClient

/// The portal talking to a real verification server over HTTP (`--verification-server URL`).
final class RemoteVerificationTests: XCTestCase {
    func testOfficerGetsATeleTANFromTheServer() async throws {
        try await LiveVerificationServer.run { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer)
            try await PortalHarness.run(verification: remote) { portal in
                let browser = try await portal.signedIn(.officer)
                let shown = try await browser.issueTeleTAN()
                XCTAssertNotNil(shown.flatMap { TeleTAN($0) })
                let issued = try await portal.auditActions("teletan.issue")
                XCTAssertEqual(issued.map(\.outcome), ["success"])
                let local = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
                XCTAssertEqual(local, 0, "the teleTAN lives on the server, not in the portal")
            }
            await remote.shutdown()
        }
    }

    /// An event officer's EVENT teleTAN and a hotline call's TEST teleTAN reach the server with
    /// their type header and the CWA role each needs; the server keeps the type and the validity.
    func testEventAndHotlineTeleTANsFromTheServer() async throws {
        try await LiveVerificationServer.run { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer)
            try await PortalHarness.run(
                configure: { $0.healthAuthorities = try! HealthAuthorities.parse("1.01.0.01,Gesundheitsamt Flensburg") },
                verification: remote
            ) { portal in
                let event = try await portal.signedIn(.event)
                let home = try await event.get("/")
                let posted = try await event.post("/teletan/event", [
                    "csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? "", "authority": "1.01.0.01"])
                XCTAssertEqual(posted.location, "/teletan/result")
                let eventTeleTAN = try await event.get("/teletan/result").teleTAN
                XCTAssertNotNil(eventTeleTAN.flatMap { TeleTAN($0) })

                let agent = try await portal.signedIn(.hotline)
                let call = try await agent.startCall()
                _ = try await agent.submitCall(call, action: "issue", checks: HotlineTests.allChecks)
                let callTeleTAN = try await agent.get("/teletan/result").teleTAN
                XCTAssertNotNil(callTeleTAN.flatMap { TeleTAN($0) })

                struct Row: Decodable { let type: String; let requested_by: String; let created_at: Date; let valid_until: Date }
                let rows = try await sql(server.app.database.database(logger: TestDatabases.testLogger)).raw(
                    "SELECT type, requested_by, created_at, valid_until FROM teletans ORDER BY created_at").all(decoding: Row.self)
                // One server serves the SQLite and the PostgreSQL round: this round's are the last two.
                let created = Array(rows.suffix(2))
                XCTAssertEqual(created.map(\.type), ["EVENT", "TEST"])
                XCTAssertEqual(created.map(\.requested_by), ["tt-event", "tt-hotline"])
                XCTAssertEqual(created.first.map { $0.valid_until.timeIntervalSince($0.created_at) }, 2 * 24 * 3600)
                // The portal kept the reference the server gave, and the server tells its status.
                struct Issued: Decodable { let reference: String? }
                let references = try await sql(portal.db).raw("SELECT reference FROM issued_teletans WHERE issued_by = 'tt-event'")
                    .all(decoding: Issued.self).compactMap(\.reference)
                XCTAssertEqual(references.count, 1)
                let statuses = await remote.statuses(
                    of: references, issuer: Issuer(username: "tt-event", roles: ["c19hotline_event"]), within: portal.db)
                XCTAssertEqual(statuses, [references[0]: .unused])
            }
            await remote.shutdown()
        }
    }

    func testNoTeleTANShownWhenThePortalCannotAuditIt() async throws {
        try await LiveVerificationServer.run { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer)
            try await PortalHarness.run(verification: remote) { portal in
                let browser = try await portal.signedIn(.officer)
                // The server creates the teleTAN; the portal's own audit entry then fails.
                try await sql(portal.db).raw("DELETE FROM audit_head").run()
                let posted = try await browser.pressIssue()
                XCTAssertEqual(posted.status, .serviceUnavailable)
                XCTAssertTrue(posted.body.contains("No teleTAN was issued."))
                let result = try await browser.get("/teletan/result")
                XCTAssertNil(result.teleTAN, "a teleTAN without its audit entry is never shown")
                let waiting = try await portal.count("SELECT COUNT(*) AS n FROM pending_displays")
                XCTAssertEqual(waiting, 0)
            }
            await remote.shutdown()
        }
    }

    func testServerLimitBecomesTheGlobalLimitPage() async throws {
        try await LiveVerificationServer.run(configure: { $0.teleTANsPerHour = 1 }) { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer)
            try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }, verification: remote) { portal in
                let browser = try await portal.signedIn(.officer)
                _ = try await browser.issueTeleTAN()
                let limited = try await browser.pressIssue()
                XCTAssertEqual(limited.status, .tooManyRequests)
                XCTAssertTrue(limited.body.contains("The limit of teleTANs for the whole service is reached."))
            }
            await remote.shutdown()
        }
    }

    /// A token names the server it is for (`--verification-audience`, the server's `--audience`):
    /// a server of another name refuses it, and the operator's log names the setting.
    func testTheServerRefusesTokensForAnotherAudience() async throws {
        let name = "https://verification.example:8082"
        try await LiveVerificationServer.run(configure: { $0.audience = name }) { server in
            let log = LogRecorder()
            let other = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer, logger: log.logger())
            try await PortalHarness.run(verification: other) { portal in
                let page = try await portal.signedIn(.officer).pressIssue()
                XCTAssertEqual(page.status, .serviceUnavailable)
                let failure = try await portal.auditActions("teletan.issue").last
                XCTAssertEqual(failure?.detailValues["reason"], "service_refused_credentials")
            }
            XCTAssertTrue(log.lines.contains { $0.message.contains("HTTP 401") && $0.message.contains("--verification-audience") },
                          "\(log.lines.map(\.message))")
            await other.shutdown()
            let signer = try await PortalTokenSigner(privateKeyPath: server.privateKeyPath, audience: name)
            let named = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: signer)
            try await PortalHarness.run(verification: named) { portal in
                let shown = try await portal.signedIn(.officer).issueTeleTAN()
                XCTAssertNotNil(shown.flatMap { TeleTAN($0) })
            }
            await named.shutdown()
        }
    }

    func testServerThatNeverAnswersTimesOut() async throws {
        // A listening socket nobody accepts from: the connection is made, no answer ever comes.
        let (listener, port) = try Self.boundSocket()
        defer { close(listener) }
        XCTAssertEqual(listen(listener, 16), 0)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        let keys = try PortalKeys.generate(into: directory.path)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(port)", signer: signer, timeout: .seconds(2))
        try await PortalHarness.run(verification: remote) { portal in
            let browser = try await portal.signedIn(.officer)
            let start = ContinuousClock.now
            let page = try await browser.pressIssue()
            let waited = ContinuousClock.now - start
            XCTAssertGreaterThanOrEqual(waited, .seconds(1), "the request really waited for the server")
            XCTAssertLessThan(waited, .seconds(10), "and gave up after the timeout (2 s; the rest is the portal's own work)")
            XCTAssertEqual(page.status, .serviceUnavailable)
            XCTAssertTrue(page.body.contains("No teleTAN was issued."))
        }
        await remote.shutdown()
    }

    func testUnreachableServerGivesAClearPageQuickly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        let keys = try PortalKeys.generate(into: directory.path)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        // A port bound here but not listening: the connection is refused. The timeout is long, so
        // a quick page shows the refusal was not waited out.
        let (socket, port) = try Self.boundSocket()
        defer { close(socket) }
        let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(port)", signer: signer, timeout: .seconds(60))
        try await PortalHarness.run(verification: remote) { portal in
            let browser = try await portal.signedIn(.officer)
            let start = ContinuousClock.now
            let page = try await browser.pressIssue()
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(3), "refused at once, not waited out")
            XCTAssertEqual(page.status, .serviceUnavailable)
            XCTAssertTrue(page.body.contains("No teleTAN was issued."))
            let failure = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(failure?.outcome, "failure")
            XCTAssertEqual(failure?.detailValues["reason"], "service_unavailable")
            let result = try await browser.get("/teletan/result")
            XCTAssertNil(result.teleTAN)
        }
        await remote.shutdown()
    }

    /// A TCP socket bound to a free port on 127.0.0.1, not listening (nothing else can take the
    /// port while it is open): connections to it are refused until `listen` is called.
    static func boundSocket() throws -> (socket: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard descriptor >= 0, bound else {
            close(descriptor)
            throw XCTSkip("could not bind a local socket")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
