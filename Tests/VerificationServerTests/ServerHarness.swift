import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import TestSupport
import XCTest
@testable import VerificationServer

/// A verification server on each test database, with a trusted portal key, driven through
/// both of its routers.
struct ServerUnderTest: Sendable {
    let server: VerificationServerApp
    let app: any TestClientProtocol
    let `internal`: any TestClientProtocol
    let clock: TestClock
    let signer: PortalTokenSigner
    let directory: URL

    static func run(
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        certsFetcher: (any RealmCertsFetching)? = nil,
        _ body: @Sendable @escaping (ServerUnderTest) async throws -> Void
    ) async throws {
        try await TestDatabases.forEach { location in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vs-\(UUID().uuidString)")
            let keys = try PortalKeys.generate(into: directory.path)
            var config = ServerConfiguration()
            config.database = location
            config.secretFile = directory.appendingPathComponent("secret").path
            config.trustedPortalKeys = [keys.publicKey]
            config.trustProxy = true
            configure(&config)
            let clock = TestClock(Date())
            let server = try await VerificationServerApp(configuration: config, logger: TestDatabases.testLogger, now: clock.function,
                                                        certsFetcher: certsFetcher)
            let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
            do {
                try await Application(router: server.makeAppRouter()).test(.router) { app in
                    try await Application(router: server.makeInternalRouter()).test(.router) { internalClient in
                        try await body(ServerUnderTest(server: server, app: app, internal: internalClient, clock: clock, signer: signer, directory: directory))
                    }
                }
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    struct Reply {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    func post(_ client: any TestClientProtocol, _ path: String, json: String? = nil, headers: HTTPFields = [:], address: String = "192.0.2.10") async throws -> Reply {
        var all = headers
        if json != nil, all[.contentType] == nil { all[.contentType] = "application/json" }
        all[HTTPField.Name("X-Forwarded-For")!] = address
        let response = try await client.executeRequest(uri: path, method: .post, headers: all, body: json.map { ByteBuffer(string: $0) })
        return Reply(status: response.status, headers: response.headers, body: String(buffer: response.body))
    }

    func createTeleTAN(type: String = "TEST", roles: [String] = ["c19hotline"]) async throws -> Reply {
        try await createTeleTAN(token: try await signer.token(username: "officer-a", roles: roles, now: clock.now), type: type)
    }

    func createTeleTAN(token: String, type: String? = "TEST") async throws -> Reply {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if let type { headers[HTTPField.Name("X-CWA-TELETAN-TYPE")!] = type }
        return try await post(`internal`, "/version/v1/tan/teletan", headers: headers)
    }

    /// The trusted portal's private key file.
    var privateKeyPath: String { directory.appendingPathComponent(PortalKeys.privateKeyFile).path }

    /// A token over any header and claims, signed (low-S) with the trusted portal's key: for
    /// tokens ``PortalTokenSigner`` never makes.
    func signed(header: [String: Any], claims: [String: Any]) throws -> String {
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: privateKeyPath, encoding: .utf8))
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(ES256Signature.lowS(Array(signature)))
    }

    func newTeleTAN() async throws -> String {
        let reply = try await createTeleTAN()
        XCTAssertEqual(reply.status, .created)
        return reply.json["value"] as? String ?? ""
    }

    func registrationToken(_ key: String, fake: Bool = false, address: String = "192.0.2.10") async throws -> Reply {
        try await post(app, "/version/v1/registrationToken", json: #"{"key":"\#(key)","keyType":"TELETAN"}"#,
                       headers: fake ? [HTTPField.Name("cwa-fake")!: "1"] : [:], address: address)
    }
}
