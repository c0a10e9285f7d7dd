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
    /// The service's own name for this teleTAN (not derived from it), by which its issuer later
    /// asks for its status or revokes it; nil from a server that offers neither.
    package let reference: String?

    package init(teleTAN: TeleTAN, type: TeleTANType, issuedAt: Date, validUntil: Date, reference: String? = nil) {
        self.teleTAN = teleTAN
        self.type = type
        self.issuedAt = issuedAt
        self.validUntil = validUntil
        self.reference = reference
    }
}

/// What became of an issued teleTAN.
package enum TeleTANStatus: String, Sendable, Codable, CaseIterable {
    /// Still redeemable: not redeemed, not revoked, not expired.
    case unused
    case redeemed
    case expired
    case revoked
}

/// The answer to a revocation.
package enum RevocationResult: String, Sendable, Equatable {
    case revoked
    /// Too late: the app has redeemed it already.
    case alreadyRedeemed = "already_redeemed"
    /// Nothing to do: it was revoked before, or it expired.
    case alreadyRevoked = "already_revoked"
    case expired
    /// No teleTAN of this issuer has that reference (or it was deleted after its retention time).
    case notFound = "not_found"
}

/// Who asks about teleTANs they issued: their username and their roles in CWA terms.
package struct Issuer: Sendable {
    package var username: String
    package var roles: [String]
    package init(username: String, roles: [String]) {
        self.username = username
        self.roles = roles
    }
}

package enum VerificationServiceError: Error, Sendable, Equatable {
    /// The server-wide limit (CWA: 1000 per rolling hour) is reached.
    case globalLimitReached(retryAfter: Duration)
    /// The verification server did not confirm the teleTAN (unreachable, timeout, 5xx, ...).
    case unavailable(reason: String)
    /// The verification server refused this portal's credentials (HTTP 401): its token (format,
    /// key or certificate, clock) or its TLS client certificate do not fit the server; retrying
    /// won't help.
    case credentialsRefused
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

    /// The status of each teleTAN `issuer` issued, by reference; references of other issuers or
    /// unknown ones are left out. Nil when the service cannot tell (a server without the status
    /// endpoint, or one that did not answer).
    func statuses(of references: [String], issuer: Issuer, within db: any Database) async -> [String: TeleTANStatus]?

    /// Revokes a teleTAN `issuer` issued, unless it was redeemed already: it then redeems like an
    /// unknown one. Throws ``VerificationServiceError/unavailable(reason:)`` when the service
    /// cannot be asked.
    func revoke(reference: String, issuer: Issuer, within db: any Database) async throws -> RevocationResult
}
