import Foundation

/// What happened, as the portal reports it. The audit log adds time, sequence number and chain.
///
/// Never put a secret here: the teleTAN itself is represented only by its keyed fingerprint
/// (`subject`), passwords and one-time codes never appear.
package struct AuditEvent: Sendable, Equatable {
    package enum Outcome: String, Sendable, Codable, CaseIterable {
        case success, failure, refused
    }

    package var action: AuditAction
    package var outcome: Outcome
    package var actor: String?
    package var role: String?
    package var address: String?
    package var requestID: String?
    /// A keyed fingerprint of the object acted on (a teleTAN), when there is one.
    package var subject: String?
    /// Small facts: teleTAN type and expiry, the reason for a refusal, ...
    package var details: [String: String]

    package init(
        action: AuditAction, outcome: Outcome, actor: String? = nil, role: String? = nil,
        address: String? = nil, requestID: String? = nil, subject: String? = nil, details: [String: String] = [:]
    ) {
        self.action = action
        self.outcome = outcome
        self.actor = actor
        self.role = role
        self.address = address
        self.requestID = requestID
        self.subject = subject
        self.details = details
    }
}

/// The actions the audit trail knows. A string type (not a closed enum) so later features
/// (hotline calls, admin review) add their own without a schema change.
package struct AuditAction: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }

    package static let signIn: AuditAction = "signin"
    package static let signOut: AuditAction = "signout"
    package static let sessionExpired: AuditAction = "session.expired"
    package static let accessDenied: AuditAction = "access.denied"
    package static let teleTANIssue: AuditAction = "teletan.issue"
    /// An issued teleTAN whose display time ended before anyone saw it.
    package static let teleTANExpiredUnshown: AuditAction = "teletan.expired_unshown"
    /// An issuer revoked a teleTAN (or tried to).
    package static let teleTANRevoke: AuditAction = "teletan.revoke"
    package static let eventApprovalRequested: AuditAction = "event.approval.requested"
    package static let eventApprovalGiven: AuditAction = "event.approval.given"
    package static let eventApprovalDeclined: AuditAction = "event.approval.declined"
}
