import Foundation
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

/// The portal talking to a real verification server over HTTP (`--verification-server URL`).
final class RemoteVerificationTests: XCTestCase {
    /// Runs a verification server's internal listener on a free local port.
    private func withServer(teleTANsPerHour: Int = 1000, _ body: @Sendable @escaping (Int, PortalTokenSigner) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        let keys = try PortalKeys.generate(into: directory.path)
        var config = ServerConfiguration()
        config.database = .sqlite(path: directory.appendingPathComponent("server.sqlite").path)
        config.secretFile = directory.appendingPathComponent("secret").path
        config.trustedPortalKeys = [keys.publicKey]
        config.teleTANsPerHour = teleTANsPerHour
        let server = try await VerificationServerApp(configuration: config, logger: TestDatabases.testLogger)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        do {
            try await Application(router: server.makeInternalRouter(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                .test(.live) { client in try await body(client.port!, signer) }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    func testOfficerGetsATeleTANFromTheServer() async throws {
        try await withServer { port, signer in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(port)", signer: signer)
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

    func testServerLimitBecomesTheGlobalLimitPage() async throws {
        try await withServer(teleTANsPerHour: 1) { port, signer in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(port)", signer: signer)
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

    func testUnreachableServerGivesAClearPageQuickly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        let keys = try PortalKeys.generate(into: directory.path)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        // Port 9 (discard) has no listener here: the connection is refused.
        let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:9", signer: signer, timeout: .seconds(3))
        try await PortalHarness.run(verification: remote) { portal in
            let browser = try await portal.signedIn(.officer)
            let start = ContinuousClock.now
            let page = try await browser.pressIssue()
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), "never a hang")
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
}
