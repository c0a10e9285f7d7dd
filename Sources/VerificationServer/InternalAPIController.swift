import Audit
import FluentKit
import Foundation
import Hummingbird
import HTTPTypes
import ServiceAuth
import Storage
import TeleTAN
import Verification

/// The internal listener: teleTAN creation, status and revocation for trusted portals
/// (`/tan/teletan`, `/tan/teletan/status`, `/tan/teletan/revoke`) and TAN verification for the
/// submission server (`/tan/verify`).
struct InternalAPIController: Sendable {
    let database: PortalDatabase
    let service: EmbeddedVerificationService
    let lifecycle: TeleTANLifecycle
    let tokens: BearerTokenVerifier
    let audit: AuditLog
    let hasher: KeyedHasher
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    static let typeHeader = HTTPField.Name("X-CWA-TELETAN-TYPE")!
    /// The created teleTAN's reference (its row id, not derived from it), for status and revocation.
    static let referenceHeader = HTTPField.Name("X-CWA-TELETAN-REFERENCE")!
    /// Most references one status request may ask about.
    static let maxStatusReferences = 100

    func addRoutes(to router: Router<ServerRequestContext>) {
        let v1 = router.group("version/v1")
        v1.post("tan/teletan", use: createTeleTAN)
        v1.post("tan/teletan/status", use: teleTANStatus)
        v1.post("tan/teletan/revoke", use: revokeTeleTAN)
        v1.post("tan/verify", use: verifyTAN)
    }

    struct TANRequest: Decodable {
        let tan: String
    }

    struct StatusRequest: Decodable {
        let references: [String]
    }

    struct RevokeRequest: Decodable {
        let reference: String
    }

    /// Who sent the request (a portal's or a realm's token), or 401; 503 when a trusted realm
    /// had to be asked for its keys and could not be. The scheme is case-insensitive (RFC 9110 §11.1).
    private func authenticatedCaller(_ request: Request) async throws -> Caller {
        guard let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") else {
            throw HTTPError(.unauthorized, message: "missing or invalid token")
        }
        // Awaited outside the `guard` condition: with it inside, Swift 6.3.1's release build
        // crashes (signal 11 in LLVM's coroutine splitting) and scripts/package-deb.sh cannot build.
        let caller = try await tokens.verify(String(authorization.dropFirst("Bearer ".count)))
        guard let caller else {
            throw HTTPError(.unauthorized, message: "missing or invalid token")
        }
        return caller
    }

    /// A missing or wrong role is 401, as in CWA's verification server (it never answers 403).
    static func missingRole(_ message: String) -> HTTPError {
        HTTPError(.unauthorized, message: message)
    }

    /// A reference as the server hands them out: a UUID in its 36-character text form (any case).
    static func isReference(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 8, 13, 18, 23: guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                        || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                else { return false }
            }
        }
        return true
    }

    @Sendable func createTeleTAN(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticatedCaller(request)
        let typeHeader = request.headers[Self.typeHeader]?.uppercased()
        guard let type = TeleTANType(rawValue: typeHeader ?? "TEST") else {
            throw HTTPError(.badRequest, message: "X-CWA-TELETAN-TYPE must be TEST or EVENT")
        }
        let username = caller.username
        let event: @Sendable (AuditEvent.Outcome, String?, [String: String]) -> AuditEvent = { outcome, subject, details in
            AuditEvent(action: "teletan.create", outcome: outcome, actor: username, role: caller.roles.joined(separator: ","),
                       address: context.clientAddress, requestID: context.id, subject: subject,
                       details: details.merging(caller.auditDetails.merging(["type": type.rawValue]) { $1 }) { $1 }
                           .merging(context.clientCertificateThumbprint.map { ["client_certificate": $0] } ?? [:]) { $1 })
        }
        let db = database.database(logger: context.logger)
        guard caller.mayCreate(type, typeHeader: typeHeader) else {
            try await audit.append(event(.refused, nil, ["reason": "role"]), at: now(), on: db)
            throw Self.missingRole("the token lacks the role for \(type.rawValue) teleTANs")
        }
        do {
            let issued = try await db.transaction { tx in
                let issued = try await service.issueTeleTAN(TeleTANRequest(type: type, requestedBy: username, requestID: context.id), within: tx)
                try await audit.append(event(.success, hasher.hash(issued.teleTAN.value, for: .teleTANFingerprint),
                                             issued.reference.map { ["reference": $0] } ?? [:]), at: now(), on: tx)
                return issued
            }
            metrics.count("verification_teletans_created_total", [("type", type.rawValue)])
            let body = try JSONEncoder().encode(["value": issued.teleTAN.value])
            // The body stays CWA's `{"value": ...}`; the reference travels in a header CWA clients ignore.
            var headers = HTTPFields()
            if let reference = issued.reference { headers[Self.referenceHeader] = reference }
            return CWARequestMiddleware.json(status: .created, body: body, headers: headers)
        } catch VerificationServiceError.globalLimitReached(let retryAfter) {
            try await audit.append(event(.refused, nil, ["reason": "global_limit"]), at: now(), on: db)
            throw HTTPError(.tooManyRequests, headers: [.retryAfter: String(max(1, Int(retryAfter.components.seconds)))],
                            message: "global teleTAN limit reached")
        }
    }

    /// The status of teleTANs the token's officer issued, by reference; others are left out
    /// (unknown and someone else's look the same).
    @Sendable func teleTANStatus(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticatedCaller(request)
        guard caller.mayManageOwnTeleTANs else {
            throw Self.missingRole("role \(CWARoles.hotline) or \(CWARoles.event) required")
        }
        let body = try await request.decodeBody(as: StatusRequest.self, context: context)
        guard (1...Self.maxStatusReferences).contains(body.references.count) else {
            throw HTTPError(.badRequest, message: "references must hold 1 to \(Self.maxStatusReferences) entries")
        }
        guard body.references.allSatisfy(Self.isReference) else {
            throw HTTPError(.badRequest, message: "every reference must be a UUID")
        }
        let statuses = try await service.statuses(
            of: body.references, requestedBy: caller.username, on: database.database(logger: context.logger))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return CWARequestMiddleware.json(status: .ok, body: try encoder.encode(["statuses": statuses.mapValues(\.rawValue)]))
    }

    /// Revokes a teleTAN the token's officer issued, unless the app redeemed it already; every
    /// attempt is audited (the reference in the details: it is a row id, nothing secret).
    @Sendable func revokeTeleTAN(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticatedCaller(request)
        let username = caller.username
        let event: @Sendable (AuditEvent.Outcome, [String: String]) -> AuditEvent = { outcome, details in
            AuditEvent(action: "teletan.revoke", outcome: outcome, actor: username, role: caller.roles.joined(separator: ","),
                       address: context.clientAddress, requestID: context.id, subject: nil,
                       details: details.merging(caller.auditDetails) { $1 }
                           .merging(context.clientCertificateThumbprint.map { ["client_certificate": $0] } ?? [:]) { $1 })
        }
        let db = database.database(logger: context.logger)
        guard caller.mayManageOwnTeleTANs else {
            try await audit.append(event(.refused, ["reason": "role"]), at: now(), on: db)
            throw Self.missingRole("role \(CWARoles.hotline) or \(CWARoles.event) required")
        }
        let body = try await request.decodeBody(as: RevokeRequest.self, context: context)
        guard Self.isReference(body.reference) else {
            throw HTTPError(.badRequest, message: "reference must be a UUID")
        }
        let reference = body.reference.lowercased()
        let result = try await db.transaction { tx in
            let result = try await service.revoke(reference: reference, requestedBy: username, on: tx)
            try await audit.append(event(result == .revoked ? .success : .refused, ["reference": reference, "result": result.rawValue]),
                                   at: now(), on: tx)
            return result
        }
        metrics.count("verification_teletan_revocations_total", [("result", result.rawValue)])
        if result == .notFound {
            throw HTTPError(.notFound, message: "no teleTAN of yours has this reference")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return CWARequestMiddleware.json(status: .ok, body: try encoder.encode(["result": result.rawValue]))
    }

    @Sendable func verifyTAN(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(as: TANRequest.self, context: context)
        // Not a TAN at all is the client's mistake (400, as CWA and the API document say); a
        // well-formed one that is unknown, expired or used is 404.
        guard TeleTANLifecycle.isUUIDv4(body.tan) else { throw HTTPError(.badRequest, message: "malformed TAN") }
        do {
            let type = try await lifecycle.verify(tan: body.tan, on: database.database(logger: context.logger))
            metrics.count("verification_tans_verified_total")
            return Response(status: .ok, headers: [Self.typeHeader: type])
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.notFound, message: "unknown, expired or already used TAN")
        }
    }
}
