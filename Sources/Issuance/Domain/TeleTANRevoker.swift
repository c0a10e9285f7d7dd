import AccessControl
import Audit
import FluentKit
import Foundation
import Verification

/// Revokes a teleTAN its issuer read to the wrong person, at the verification service, and
/// audits the attempt whatever its result.
package struct TeleTANRevoker: Sendable {
    let service: any VerificationService
    let audit: AuditLog
    let issued = IssuedTeleTANs()

    package init(service: any VerificationService, audit: AuditLog) {
        self.service = service
        self.audit = audit
    }

    /// Revokes `row` (one of `user`'s) for `reason`; returns the result's name (a
    /// ``RevocationResult`` raw value, or `unavailable` when the service could not be asked or
    /// offers no revocation). The audit entry carries the reason's code, never its note.
    package func revoke(
        _ row: IssuedTeleTANs.Row, by user: ActingUser, reason: RevocationReason? = nil, at time: Date, on db: any Database
    ) async throws -> String {
        let event: @Sendable (AuditEvent.Outcome, String) -> AuditEvent = { outcome, result in
            var details = ["type": row.type, "result": result]
            details["reason"] = reason?.code.rawValue
            return AuditEvent(.teleTANRevoke, outcome, by: user, subject: row.fingerprint, details: details)
        }
        guard let reference = row.reference else {
            try await audit.append(event(.refused, "not_supported"), at: time, on: db)
            return "unavailable"
        }
        do {
            let result = try await service.revoke(
                reference: reference, issuer: Issuer(username: user.username, roles: user.roles.cwaRoles), within: db)
            try await db.transaction { tx in
                if result == .revoked || result == .alreadyRevoked { try await issued.markRevoked(row.id, at: time, reason: reason, on: tx) }
                try await audit.append(event(result == .revoked ? .success : .refused, result.rawValue), at: time, on: tx)
            }
            return result.rawValue
        } catch VerificationServiceError.unavailable {
            try await audit.append(event(.failure, "unavailable"), at: time, on: db)
            return "unavailable"
        }
    }
}
