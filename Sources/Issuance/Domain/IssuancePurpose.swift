import FluentKit

/// What a teleTAN is issued for, beyond who issues it: the hotline call it belongs to, the
/// health authority that asked for an EVENT teleTAN. Empty for an officer's plain issuance.
package struct IssuancePurpose: Sendable {
    /// Added to the issuance's audit entry (`call`, `health_authority`, `approved_by`): ids and
    /// usernames only, nothing personal about the caller.
    package var auditDetails: [String: String] = [:]
    /// The hotline call the result page leads back to.
    package var callID: String?
    /// The health authority's name, shown with an EVENT teleTAN.
    package var healthAuthorityName: String?
    /// Runs inside the transaction that records the new teleTAN, with its keyed fingerprint.
    /// Throwing ``IssuanceRefusal`` refuses the issuance: nothing is shown (embedded: nothing
    /// is kept either).
    package var onIssued: (@Sendable (_ fingerprint: String, _ db: any Database) async throws -> Void)?

    package init(
        auditDetails: [String: String] = [:], callID: String? = nil, healthAuthorityName: String? = nil,
        onIssued: (@Sendable (_ fingerprint: String, _ db: any Database) async throws -> Void)? = nil
    ) {
        self.auditDetails = auditDetails
        self.callID = callID
        self.healthAuthorityName = healthAuthorityName
        self.onIssued = onIssued
    }
}

/// Thrown by ``IssuancePurpose/onIssued``: the purpose no longer allows the teleTAN.
package struct IssuanceRefusal: Error, Sendable {
    /// For the audit entry (`call_not_open`, `approval_used`, ...).
    package let reason: String
    package init(reason: String) { self.reason = reason }
}
