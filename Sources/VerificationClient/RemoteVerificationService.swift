import AsyncHTTPClient
import FluentKit
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import ServiceAuth
import TeleTAN
import Verification

/// A CWA-compatible verification server reached over HTTP (`POST /version/v1/tan/teletan`),
/// behind the same boundary as the embedded service. Every request carries a short-lived JWT
/// signed with this portal's key, in the format its `signer` speaks (this project's, or CWA's).
/// Nothing that the server did not confirm with a well-formed teleTAN is ever returned, and no
/// request waits longer than `timeout`. A 401 is logged once per refused request with its likely causes
/// (never the token): the token, or over `https` the client certificate.
///
/// Status and revocation use this server's own internal endpoints (`/tan/teletan/status`,
/// `/tan/teletan/revoke`); a plain CWA server has neither, and gives no reference at issuance.
package final class RemoteVerificationService: VerificationService {
    private let endpoint: String
    private let statusEndpoint: String
    private let revokeEndpoint: String
    private let signer: any VerificationAuth
    private let client: HTTPClient
    private let timeout: Duration
    private let now: @Sendable () -> Date
    private let logger: Logger
    /// Over `https` a 401 may also mean that the server does not allow the client certificate.
    private let usesTLS: Bool

    /// `tls` adds a client certificate (mutual TLS) or trust roots for an `https` server; without
    /// it, `https` uses the system's trust store.
    package init(baseURL: String, signer: any VerificationAuth, timeout: Duration = .seconds(5), tls: TLSConfiguration? = nil,
                logger: Logger = Logger(label: "teletan-portal"), now: @escaping @Sendable () -> Date = Date.init) {
        endpoint = baseURL.hasSuffix("/") ? baseURL + "version/v1/tan/teletan" : baseURL + "/version/v1/tan/teletan"
        statusEndpoint = endpoint + "/status"
        revokeEndpoint = endpoint + "/revoke"
        self.signer = signer
        self.timeout = timeout
        self.now = now
        self.logger = logger
        usesTLS = baseURL.lowercased().hasPrefix("https:")
        // A fresh connection per request after a failure: the server coming back is picked up
        // by the next request, without a restart.
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        // A refused connection fails the request at once: the officer on the phone gets "no
        // teleTAN was issued, try again" now, not after AsyncHTTPClient's retries have used up
        // its 10 s connect timeout. (A server that does not answer at all still takes `timeout`.)
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package var sharesDatabase: Bool { false }

    package func issueTeleTAN(_ request: TeleTANRequest, within _: any Database) async throws -> IssuedTeleTAN {
        let issuedAt = now()
        var http = HTTPClientRequest(url: endpoint)
        http.method = .POST
        http.headers.add(name: "Authorization", value: "Bearer " + (try await signer.token(username: request.requestedBy, roles: request.roles, now: issuedAt)))
        if let type = signer.typeHeader(for: request.type) {
            http.headers.add(name: "X-CWA-TELETAN-TYPE", value: type)
        }
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
                validUntil: issuedAt.addingTimeInterval(TimeInterval(request.type.validity.components.seconds)),
                reference: response.headers.first(name: Self.referenceHeader).flatMap(Self.reference(from:)))
        case 429:
            let seconds = response.headers.first(name: "Retry-After").flatMap(Int64.init) ?? 60
            throw VerificationServiceError.globalLimitReached(retryAfter: .seconds(max(1, seconds)))
        case 401:
            var metadata: Logger.Metadata = ["verification_auth": "\(signer.format)", "teletan_type": "\(request.type.rawValue)"]
            // The id the officer's page shows, to find this line.
            if let id = request.requestID { metadata["request_id"] = "\(id)" }
            let certificate = usesTLS
                ? "; or the server does not allow this portal's TLS client certificate (--verification-client-certificate: its SHA-256 thumbprint must be on the server's allow-list)"
                : ""
            logger.error("the verification server refused this portal's token (HTTP 401): \(signer.refusalHint)\(certificate)", metadata: metadata)
            throw VerificationServiceError.credentialsRefused
        default:
            throw VerificationServiceError.unavailable(reason: "status \(response.status.code)")
        }
    }

    /// The header in which this project's server names a new teleTAN's reference.
    static let referenceHeader = "X-CWA-TELETAN-REFERENCE"
    /// Most references the server takes in one status request.
    static let statusBatchSize = 100

    /// A well-formed UUID in lower case, or nil for anything else.
    static func reference(from value: String) -> String? {
        guard value.utf8.count == 36, let uuid = UUID(uuidString: value) else { return nil }
        return uuid.uuidString.lowercased()
    }

    package func statuses(of references: [String], issuer: Issuer, within _: any Database) async -> [String: TeleTANStatus]? {
        // A reference that is no UUID was never given out: unknown, as the embedded service says.
        let wanted = Array(Set(references.compactMap(Self.reference(from:)))).sorted()
        var result: [String: TeleTANStatus] = [:]
        var start = wanted.startIndex
        while start < wanted.endIndex {
            let batch = Array(wanted[start..<min(start + Self.statusBatchSize, wanted.endIndex)])
            start += batch.count
            struct Body: Decodable { let statuses: [String: String] }
            guard let body = try? JSONEncoder().encode(["references": batch]),
                  let response = try? await post(body, to: statusEndpoint, issuer: issuer), response.status.code == 200,
                  let bytes = try? await response.body.collect(upTo: 64 * 1024),
                  let decoded = try? JSONDecoder().decode(Body.self, from: Data(buffer: bytes))
            else { return nil }
            // Only what was asked for, and only statuses this portal knows (a newer server may have more).
            let asked = Set(batch)
            for (reference, value) in decoded.statuses {
                guard let key = Self.reference(from: reference), asked.contains(key), let status = TeleTANStatus(rawValue: value) else { continue }
                result[key] = status
            }
        }
        return result
    }

    package func revoke(reference: String, issuer: Issuer, within _: any Database) async throws -> RevocationResult {
        guard let reference = Self.reference(from: reference) else { return .notFound }
        let response: HTTPClientResponse
        do {
            response = try await post(try JSONEncoder().encode(["reference": reference]), to: revokeEndpoint, issuer: issuer)
        } catch {
            throw VerificationServiceError.unavailable(reason: "unreachable")
        }
        switch response.status.code {
        case 200:
            struct Body: Decodable { let result: String }
            guard let bytes = try? await response.body.collect(upTo: 4096),
                  let body = try? JSONDecoder().decode(Body.self, from: Data(buffer: bytes)),
                  let result = RevocationResult(rawValue: body.result)
            else { throw VerificationServiceError.unavailable(reason: "malformed response") }
            return result
        case 404:
            return .notFound
        default:
            throw VerificationServiceError.unavailable(reason: "status \(response.status.code)")
        }
    }

    /// A JSON POST with a fresh token for `issuer`, waiting at most `timeout`.
    private func post(_ body: Data, to url: String, issuer: Issuer) async throws -> HTTPClientResponse {
        var http = HTTPClientRequest(url: url)
        http.method = .POST
        http.headers.add(name: "Authorization", value: "Bearer " + (try await signer.token(username: issuer.username, roles: issuer.roles, now: now())))
        http.headers.add(name: "Content-Type", value: "application/json")
        http.body = .bytes(ByteBuffer(bytes: body))
        return try await client.execute(http, timeout: TimeAmount(timeout))
    }

    package func shutdown() async {
        try? await client.shutdown()
    }
}
