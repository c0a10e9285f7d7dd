import Foundation
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import TestSupport
import VerificationServer

/// A real verification server's internal listener on a free local port (SQLite in a temporary
/// directory of its own, one trusted portal key), for the portal's remote-mode tests.
enum LiveVerificationServer {
    struct Running: Sendable {
        let port: Int
        /// Signs the trusted portal's tokens (for the default audience).
        let signer: PortalTokenSigner
        /// The trusted portal's private key, for a signer of another audience.
        let privateKeyPath: String
        let app: VerificationServerApp
    }

    /// Runs `body` against the server; `configure` may change its configuration (a global limit,
    /// TLS on the internal listener) first.
    static func run(
        configure: (inout ServerConfiguration) throws -> Void = { _ in },
        _ body: @Sendable @escaping (Running) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verification-\(UUID().uuidString)").path
        let keys = try PortalKeys.generate(into: directory)
        var configuration = ServerConfiguration()
        configuration.database = .sqlite(path: directory + "/server.sqlite")
        configuration.secretFile = directory + "/secret"
        configuration.trustedPortalKeys = [keys.publicKey]
        try configure(&configuration)
        let app = try await VerificationServerApp(configuration: configuration, logger: TestDatabases.testLogger)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        do {
            try await Application(router: app.makeInternalRouter(), server: try app.makeInternalServer(),
                                  configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                .test(.live) { client in try await body(Running(port: client.port!, signer: signer, privateKeyPath: keys.privateKey, app: app)) }
        } catch {
            await app.shutdown()
            throw error
        }
        await app.shutdown()
    }
}
