import AsyncHTTPClient
import Audit
import FluentKit
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOSSL
import ServiceAuth
import TestSupport
import VerificationServer
import XCTest
@testable import Portal
import VerificationClient

/// The internal listener over TLS with a client-certificate allow-list (mutual TLS), and the
/// portal's client certificate: only an allowed portal gets teleTANs; every other client gets 401.
final class MutualTLSTests: XCTestCase {
    struct Fixture: Sendable {
        let port: Int
        let signer: PortalTokenSigner
        let server: TestCertificate
        let allowed: TestCertificate
        let stranger: TestCertificate
        let app: VerificationServerApp
    }

    private func withMutualTLSServer(_ body: @Sendable @escaping (Fixture) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-\(UUID().uuidString)").path
        let serverCertificate = try TestCertificate.make(named: "server", in: directory)
        let allowed = try TestCertificate.make(named: "portal-allowed", in: directory)
        let stranger = try TestCertificate.make(named: "portal-stranger", in: directory)
        let thumbprint = try XCTUnwrap(ListenerTLS.normalizedThumbprint(try allowed.opensslFingerprint()))
        try await LiveVerificationServer.run(configure: {
            $0.internalTLS = ListenerTLS(certificateChainPath: serverCertificate.certificate, privateKeyPath: serverCertificate.privateKey,
                                         allowedClientThumbprints: [thumbprint])
        }) { server in
            try await body(Fixture(port: server.port, signer: server.signer, server: serverCertificate, allowed: allowed,
                                   stranger: stranger, app: server.app))
        }
    }

    private static func remote(_ fixture: Fixture, client: TestCertificate?, log: LogRecorder = LogRecorder()) throws -> RemoteVerificationService {
        let tls = try VerificationClientTLS.configuration(
            certificate: client?.certificate, privateKey: client?.privateKey, trustRoots: fixture.server.certificate)
        return RemoteVerificationService(
            baseURL: "https://127.0.0.1:\(fixture.port)", signer: fixture.signer, timeout: .seconds(5), tls: tls, logger: log.logger())
    }

    func testAnAllowedPortalGetsATeleTANAndTheServerRecordsItsCertificate() async throws {
        try await withMutualTLSServer { fixture in
            let remote = try Self.remote(fixture, client: fixture.allowed)
            try await PortalHarness.run(verification: remote) { portal in
                let browser = try await portal.signedIn(.officer)
                let shown = try await browser.issueTeleTAN()
                XCTAssertNotNil(shown, "the allowed portal gets a teleTAN over mutual TLS")
            }
            await remote.shutdown()
            let created = try await AuditEntry.query(on: fixture.app.database.database(logger: TestDatabases.testLogger))
                .filter(\.$action == "teletan.create").all()
            XCTAssertFalse(created.isEmpty)
            let expected = ListenerTLS.normalizedThumbprint(try fixture.allowed.opensslFingerprint())
            XCTAssertTrue(created.allSatisfy { $0.detailValues["client_certificate"] == expected },
                          "the server's audit names the portal's certificate")
        }
    }

    func testPortalsWithoutAnAllowedCertificateGetNoTeleTAN() async throws {
        try await withMutualTLSServer { fixture in
            for client in [fixture.stranger, nil] {
                let log = LogRecorder()
                let remote = try Self.remote(fixture, client: client, log: log)
                try await PortalHarness.run(verification: remote) { portal in
                    let browser = try await portal.signedIn(.officer)
                    let page = try await browser.pressIssue()
                    XCTAssertEqual(page.status, .serviceUnavailable)
                    XCTAssertTrue(page.body.contains("No teleTAN was issued."))
                    let failure = try await portal.auditActions("teletan.issue").last
                    XCTAssertEqual(failure?.outcome, "failure")
                    // A 401 (the certificate is not on the allow-list): the operator's to fix.
                    XCTAssertEqual(failure?.detailValues["reason"], "service_refused_credentials")
                    XCTAssertTrue(page.body.contains("did not accept the portal"), "the credentials page")
                }
                // The operator's log line names the client certificate among the likely causes.
                XCTAssertTrue(log.lines.contains { $0.message.contains("HTTP 401") && $0.message.contains("--verification-client-certificate") },
                              "\(log.lines.map(\.message))")
                await remote.shutdown()
            }
            // Refused by the server itself (401 before any handler), not lost on the way: nothing
            // was created, and the same trust settings with the allowed certificate do work.
            let created = try await AuditEntry.query(on: fixture.app.database.database(logger: TestDatabases.testLogger))
                .filter(\.$action == "teletan.create").count()
            XCTAssertEqual(created, 0)
            let allowed = try Self.remote(fixture, client: fixture.allowed)
            let issued = try await allowed.issueTeleTAN(.init(type: .test, requestedBy: "officer-a", requestID: "r1", roles: ["c19hotline"]),
                                                        within: fixture.app.database.database(logger: TestDatabases.testLogger))
            XCTAssertNotNil(issued.teleTAN)
            await allowed.shutdown()
        }
    }

    func testTheServerAnswers401WithoutAnAllowedCertificate() async throws {
        try await withMutualTLSServer { fixture in
            for client in [fixture.stranger, nil, fixture.allowed] {
                var configuration = HTTPClient.Configuration()
                configuration.tlsConfiguration = try VerificationClientTLS.configuration(
                    certificate: client?.certificate, privateKey: client?.privateKey, trustRoots: fixture.server.certificate)
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                var request = HTTPClientRequest(url: "https://127.0.0.1:\(fixture.port)/version/v1/tan/verify")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: #"{"tan":"00000000-0000-4000-8000-000000000000"}"#))
                let response = try await http.execute(request, timeout: .seconds(5))
                let body = String(buffer: try await response.body.collect(upTo: 4096))
                if client?.certificate == fixture.allowed.certificate {
                    XCTAssertEqual(response.status.code, 404, "an allowed client reaches the endpoint (unknown TAN)")
                } else {
                    XCTAssertEqual(response.status.code, 401, "client \(client?.certificate ?? "without certificate")")
                    XCTAssertEqual(response.headers.first(name: "Content-Type"), "application/json")
                    XCTAssertTrue(body.contains("client certificate not allowed"))
                }
                try await http.shutdown()
            }
        }
    }

    func testPlainHTTPClientsCannotTalkToATLSListener() async throws {
        try await withMutualTLSServer { fixture in
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(fixture.port)/version/v1/tan/verify")
            request.method = .POST
            let start = ContinuousClock.now
            do {
                _ = try await http.execute(request, timeout: .seconds(60))
                XCTFail("no plaintext answer from a TLS listener")
            } catch {
                XCTAssertLessThan(ContinuousClock.now - start, .seconds(20), "refused, not waited out: \(error)")
            }
            try await http.shutdown()
        }
    }

    func testTheAppListenerCanServeTLSWithoutClientCertificates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        let certificate = try TestCertificate.make(named: "server", in: directory)
        var config = ServerConfiguration()
        config.database = .sqlite(path: directory + "/server.sqlite")
        config.secretFile = directory + "/secret"
        config.appTLS = ListenerTLS(certificateChainPath: certificate.certificate, privateKeyPath: certificate.privateKey)
        let app = try await VerificationServerApp(configuration: config, logger: TestDatabases.testLogger)
        do {
            try await Application(router: app.makeAppRouter(), server: try app.makeAppServer(),
                                  configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                .test(.live) { client in
                    var configuration = HTTPClient.Configuration()
                    configuration.tlsConfiguration = try VerificationClientTLS.configuration(
                        certificate: nil, privateKey: nil, trustRoots: certificate.certificate)
                    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                    let response = try await http.execute(HTTPClientRequest(url: "https://127.0.0.1:\(client.port!)/health/live"), timeout: .seconds(5))
                    XCTAssertEqual(response.status.code, 200)
                    try await http.shutdown()
                }
        } catch {
            await app.shutdown()
            throw error
        }
        await app.shutdown()
    }

    func testThumbprintsAreAcceptedInOpenSSLAndPlainForm() throws {
        let hex = String(repeating: "ab", count: 32)
        let colons = stride(from: 0, to: 64, by: 2).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)]).uppercased()
        }.joined(separator: ":")
        XCTAssertEqual(ListenerTLS.normalizedThumbprint(colons), hex)
        XCTAssertEqual(ListenerTLS.normalizedThumbprint(hex), hex)
        XCTAssertNil(ListenerTLS.normalizedThumbprint("ab:cd"))
        XCTAssertNil(ListenerTLS.normalizedThumbprint(String(repeating: "zz", count: 32)))
    }
}
