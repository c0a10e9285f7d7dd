import AsyncHTTPClient
import FluentKit
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ServiceAuth
import TeleTAN
import Verification

/// A CWA-compatible verification server reached over HTTP (`POST /version/v1/tan/teletan`),
/// behind the same boundary as the embedded service. Every request carries a short-lived JWT
/// signed with this portal's key. Nothing that the server did not confirm with a well-formed
/// teleTAN is ever returned, and no request waits longer than `timeout`.
package final class RemoteVerificationService: VerificationService {
    private let endpoint: String
    private let signer: PortalTokenSigner
    private let client: HTTPClient
    private let timeout: Duration
    private let now: @Sendable () -> Date

    /// `tls` adds a client certificate (mutual TLS) or trust roots for an `https` server; without
    /// it, `https` uses the system's trust store.
    package init(baseURL: String, signer: PortalTokenSigner, timeout: Duration = .seconds(5), tls: TLSConfiguration? = nil,
                now: @escaping @Sendable () -> Date = Date.init) {
        endpoint = baseURL.hasSuffix("/") ? baseURL + "version/v1/tan/teletan" : baseURL + "/version/v1/tan/teletan"
        self.signer = signer
        self.timeout = timeout
        self.now = now
        // A fresh connection per request after a failure: the server coming back is picked up
        // by the next request, without a restart.
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package var sharesDatabase: Bool { false }

    package func issueTeleTAN(_ request: TeleTANRequest, within _: any Database) async throws -> IssuedTeleTAN {
        let issuedAt = now()
        var http = HTTPClientRequest(url: endpoint)
        http.method = .POST
        http.headers.add(name: "Authorization", value: "Bearer " + (try await signer.token(username: request.requestedBy, roles: request.roles, now: issuedAt)))
        http.headers.add(name: "X-CWA-TELETAN-TYPE", value: request.type.rawValue)
        http.headers.add(name: "Content-Length", value: "0")
        let response: HTTPClientResponse
        do {
            response = try await client.execute(http, timeout: TimeAmount(timeout))
        } catch {
            throw VerificationServiceError.unavailable(reason: "unreachable")
        }
        switch response.status.code {
        case 201:
            struct Body: Decodable { let value: String }
            guard let bytes = try? await response.body.collect(upTo: 4096),
                  let body = try? JSONDecoder().decode(Body.self, from: Data(buffer: bytes)),
                  let teleTAN = TeleTAN(body.value)
            else { throw VerificationServiceError.unavailable(reason: "malformed response") }
            return IssuedTeleTAN(
                teleTAN: teleTAN, type: request.type, issuedAt: issuedAt,
                validUntil: issuedAt.addingTimeInterval(TimeInterval(request.type.validity.components.seconds)))
        case 429:
            let seconds = response.headers.first(name: "Retry-After").flatMap(Int64.init) ?? 60
            throw VerificationServiceError.globalLimitReached(retryAfter: .seconds(max(1, seconds)))
        default:
            throw VerificationServiceError.unavailable(reason: "status \(response.status.code)")
        }
    }

    // Status and revocation: a helper implements these against the standalone server's
    // internal endpoints (see docs/verification-api.yaml).
    package func statuses(of references: [String], issuer: Issuer, within _: any Database) async -> [String: TeleTANStatus]? {
        nil
    }

    package func revoke(reference: String, issuer: Issuer, within _: any Database) async throws -> RevocationResult {
        throw VerificationServiceError.unavailable(reason: "not supported")
    }

    package func shutdown() async {
        try? await client.shutdown()
    }
}
