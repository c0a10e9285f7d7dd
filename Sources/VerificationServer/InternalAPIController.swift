import Audit
import FluentKit
import Foundation
import Hummingbird
import HTTPTypes
import ServiceAuth
import Storage
import TeleTAN
import Verification

/// The internal listener: teleTAN creation for trusted portals (`/tan/teletan`) and TAN
/// verification for the submission server (`/tan/verify`).
struct InternalAPIController: Sendable {
    let database: PortalDatabase
    let service: EmbeddedVerificationService
    let lifecycle: TeleTANLifecycle
    let tokens: PortalTokenVerifier
    let audit: AuditLog
    let hasher: KeyedHasher
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    static let typeHeader = HTTPField.Name("X-CWA-TELETAN-TYPE")!

    func addRoutes(to router: Router<ServerRequestContext>) {
        let v1 = router.group("version/v1")
        v1.post("tan/teletan", use: createTeleTAN)
        v1.post("tan/verify", use: verifyTAN)
    }

    struct TANRequest: Decodable {
        let tan: String
    }

    @Sendable func createTeleTAN(_ request: Request, context: ServerRequestContext) async throws -> Response {
        // The scheme is case-insensitive (RFC 9110 §11.1).
        guard let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer "),
              let verified = await tokens.verify(String(authorization.dropFirst("Bearer ".count)), now: now())
        else {
            throw HTTPError(.unauthorized, message: "missing or invalid token")
        }
        guard let type = TeleTANType(rawValue: (request.headers[Self.typeHeader] ?? "TEST").uppercased()) else {
            throw HTTPError(.badRequest, message: "X-CWA-TELETAN-TYPE must be TEST or EVENT")
        }
        let requiredRole = type == .event ? PortalTokenPayload.eventRole : PortalTokenPayload.hotlineRole
        let username = verified.payload.sub.value
        let event: @Sendable (AuditEvent.Outcome, String?, [String: String]) -> AuditEvent = { outcome, subject, details in
            AuditEvent(action: "teletan.create", outcome: outcome, actor: username, role: verified.payload.roles.joined(separator: ","),
                       address: context.clientAddress, requestID: context.id, subject: subject,
                       details: details.merging(["portal": verified.portal, "type": type.rawValue]) { $1 }
                           .merging(context.clientCertificateThumbprint.map { ["client_certificate": $0] } ?? [:]) { $1 })
        }
        let db = database.database(logger: context.logger)
        guard verified.payload.roles.contains(requiredRole) else {
            try await audit.append(event(.refused, nil, ["reason": "role"]), at: now(), on: db)
            throw HTTPError(.forbidden, message: "role \(requiredRole) required for \(type.rawValue) teleTANs")
        }
        do {
            let issued = try await db.transaction { tx in
                let issued = try await service.issueTeleTAN(TeleTANRequest(type: type, requestedBy: username, requestID: context.id), within: tx)
                try await audit.append(event(.success, hasher.hash(issued.teleTAN.value, for: .teleTANFingerprint), [:]), at: now(), on: tx)
                return issued
            }
            metrics.count("verification_teletans_created_total", [("type", type.rawValue)])
            let body = try JSONEncoder().encode(["value": issued.teleTAN.value])
            return CWARequestMiddleware.json(status: .created, body: body)
        } catch VerificationServiceError.globalLimitReached(let retryAfter) {
            try await audit.append(event(.refused, nil, ["reason": "global_limit"]), at: now(), on: db)
            throw HTTPError(.tooManyRequests, headers: [.retryAfter: String(max(1, Int(retryAfter.components.seconds)))],
                            message: "global teleTAN limit reached")
        }
    }

    @Sendable func verifyTAN(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decode(as: TANRequest.self, context: context)
        do {
            let type = try await lifecycle.verify(tan: body.tan, on: database.database(logger: context.logger))
            metrics.count("verification_tans_verified_total")
            return Response(status: .ok, headers: [Self.typeHeader: type])
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.notFound, message: "unknown, expired or already used TAN")
        }
    }
}
