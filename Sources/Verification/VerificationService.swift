import FluentKit
import Foundation
import TeleTAN

/// Who asks for a teleTAN, and of which type.
package struct TeleTANRequest: Sendable {
    package var type: TeleTANType
    /// The officer's username, for the verification side's own records.
    package var requestedBy: String
    package var requestID: String?
    /// The officer's roles in CWA terms (`c19hotline`, `c19hotline_event`), for a remote server.
    package var roles: [String]

    package init(type: TeleTANType, requestedBy: String, requestID: String? = nil, roles: [String] = []) {
        self.type = type
        self.requestedBy = requestedBy
        self.requestID = requestID
        self.roles = roles
    }
}

/// A freshly created teleTAN. This value is the only place its characters exist: the caller
/// shows it once and lets it go.
package struct IssuedTeleTAN: Sendable {
    package let teleTAN: TeleTAN
    package let type: TeleTANType
    package let issuedAt: Date
    package let validUntil: Date

    package init(teleTAN: TeleTAN, type: TeleTANType, issuedAt: Date, validUntil: Date) {
        self.teleTAN = teleTAN
        self.type = type
        self.issuedAt = issuedAt
        self.validUntil = validUntil
    }
}

package enum VerificationServiceError: Error, Sendable, Equatable {
    /// The server-wide limit (CWA: 1000 per rolling hour) is reached.
    case globalLimitReached(retryAfter: Duration)
    /// The verification server did not confirm the teleTAN (unreachable, timeout, 5xx, ...).
    case unavailable(reason: String)
}

/// The boundary between the portal and the verification server. The portal embeds
/// ``EmbeddedVerificationService`` by default; a remote implementation speaks the CWA API.
package protocol VerificationService: Sendable {
    /// Creates one teleTAN. `db` is the caller's open transaction: an implementation that stores
    /// in the same database writes there, so the teleTAN exists only if the caller's audit entry
    /// commits too. A remote implementation ignores it.
    func issueTeleTAN(_ request: TeleTANRequest, within db: any Database) async throws -> IssuedTeleTAN

    /// True when the service writes into the caller's database (and so joins its transaction).
    var sharesDatabase: Bool { get }
}
