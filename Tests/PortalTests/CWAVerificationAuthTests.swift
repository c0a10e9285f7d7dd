import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import Synchronization
import TestSupport
import VerificationClient
import XCTest
@testable import Portal
@testable import PortalWeb

/// The portal with `--verification-auth cwa`: the certs document only on the metrics listener,
/// and a verification server's 401 as a clear page for the officer and one log line for the
/// operator (never the token).
final class CWAVerificationAuthTests: XCTestCase {
    private func signingKey() throws -> CWASigningKey {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cwa-auth-\(UUID().uuidString)").path
        let (keyPath, certificatePath) = try CWASigningKey.generate(into: directory, commonName: "teletan-portal-test")
        return try CWASigningKey.load(keyPath: keyPath, certificatePath: certificatePath)
    }

    func testCertsDocumentIsServedOnTheMetricsListenerOnly() async throws {
        let document = try CertsDocument.json(for: signingKey())
        try await PortalHarness.run(certs: CertsRoute(document: document)) { portal in
            try await Application(router: portal.portal.makeMetricsRouter()).test(.router) { client in
                try await client.execute(uri: CertsRoute.path, method: .get) { response in
                    XCTAssertEqual(response.status, .ok)
                    XCTAssertEqual(response.headers[.contentType], "application/json")
                    XCTAssertEqual(String(buffer: response.body), document)
                }
                try await client.execute(uri: "/metrics", method: .get) { XCTAssertEqual($0.status, .ok) }
            }
            let onPublic = try await portal.browser().get(CertsRoute.path)
            XCTAssertEqual(onPublic.status, .notFound, "the public listener never serves the certs document")
        }
        // Without --verification-auth cwa there is nothing to publish.
        try await PortalHarness.run { portal in
            try await Application(router: portal.portal.makeMetricsRouter()).test(.router) { client in
                try await client.execute(uri: CertsRoute.path, method: .get) { XCTAssertEqual($0.status, .notFound) }
            }
        }
    }

    /// What a stand-in verification server that refuses every token (as CWA's does: 401
    /// "JWT is invalid.") received.
    private final class Refusals: Sendable {
        let requests = Mutex<[(authorization: String?, type: String?)]>([])
    }

    private func withRefusingServer(_ body: @Sendable @escaping (Int, Refusals) async throws -> Void) async throws {
        let refusals = Refusals()
        let router = Router()
        router.post("/version/v1/tan/teletan") { request, _ -> Response in
            refusals.requests.withLock {
                $0.append((request.headers[.authorization], request.headers[HTTPField.Name("X-CWA-TELETAN-TYPE")!]))
            }
            return Response(status: .unauthorized, body: .init(byteBuffer: ByteBuffer(string: "JWT is invalid.")))
        }
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
            try await body(client.port!, refusals)
        }
    }

    func testRefusedTokenGivesAClearPageKeepsTheCallAndLogsTheLikelyCauseButNeverTheToken() async throws {
        let key = try signingKey()
        try await withRefusingServer { port, refusals in
            let log = LogRecorder()
            let remote = RemoteVerificationService(
                baseURL: "http://127.0.0.1:\(port)", signer: await CWATokenSigner(key: key), logger: log.logger())
            // Every issuance reaches the server (no 30 s wait between the officer's two tries).
            try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }, verification: remote) { portal in
                let (receivedBefore, loggedBefore) = (refusals.requests.withLock { $0.count }, log.lines.count)
                let officer = try await portal.signedIn(.officer)
                let page = try await officer.pressIssue()
                XCTAssertEqual(page.status, .serviceUnavailable)
                XCTAssertNil(page.headers[.retryAfter], "waiting does not help")
                XCTAssertTrue(page.body.contains("The verification server did not accept the portal&#39;s credentials")
                              || page.body.contains("The verification server did not accept the portal's credentials"), page.body)
                XCTAssertTrue(page.body.contains("please tell your administrator"))
                _ = try await officer.get("/language/de?back=/")
                let german = try await officer.pressIssue()
                XCTAssertEqual(german.status, .serviceUnavailable)
                XCTAssertTrue(german.body.contains("Der Verifikationsserver hat die Anmeldung des Portals nicht angenommen"), german.body)

                // A hotline call keeps its answers: the agent issues again once the operator fixed it.
                let agent = try await portal.signedIn(.hotline)
                let call = try await agent.startCall()
                let refused = try await agent.submitCall(call, action: "issue", checks: HotlineTests.allChecks)
                XCTAssertEqual(refused.status, .serviceUnavailable)
                let again = try await agent.get(call)
                for id in HotlineTests.allChecks { XCTAssertTrue(again.body.contains("id=\"check-\(id)\" checked"), "the tick stays: \(id)") }

                let audited = try await portal.auditActions("teletan.issue")
                XCTAssertEqual(audited.map(\.outcome), ["failure", "failure", "failure"])
                XCTAssertTrue(audited.allSatisfy { $0.details.contains("service_refused_credentials") }, "\(audited.map(\.details))")

                let received = refusals.requests.withLock { Array($0.dropFirst(receivedBefore)) }
                XCTAssertEqual(received.count, 3)
                XCTAssertEqual(received.map(\.type), [nil, nil, nil], "TEST teleTANs carry no type header in CWA's format")
                let tokens = received.compactMap { $0.authorization?.replacingOccurrences(of: "Bearer ", with: "") }
                XCTAssertEqual(tokens.count, 3)

                let lines = log.lines.dropFirst(loggedBefore)
                let refusalsLogged = lines.filter { $0.message.contains("HTTP 401") }
                XCTAssertEqual(refusalsLogged.count, 3, "one line per refused request")
                for line in refusalsLogged {
                    XCTAssertEqual(line.level, .error)
                    XCTAssertEqual(line.metadata["verification_auth"], "cwa")
                    for cause in ["jwt.server", "clocks", "--verification-certificate", "--verification-auth"] {
                        XCTAssertTrue(line.message.contains(cause), "the line names \(cause): \(line.message)")
                    }
                }
                for line in lines {
                    let text = line.message + line.metadata.values.joined()
                    XCTAssertFalse(tokens.contains { text.contains($0) || text.contains($0.split(separator: ".")[2]) }, "a token was logged")
                }
            }
            await remote.shutdown()
        }
    }
}
