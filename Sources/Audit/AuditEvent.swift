import Foundation

/// What happened, as the portal reports it. The audit log adds time, sequence number and chain.
///
/// Never put a secret here: the teleTAN itself is represented only by its keyed fingerprint
/// (`subject`), passwords and one-time codes never appear.
public struct AuditEvent: Sendable, Equatable {
    public enum Outcome: String, Sendable, Codable, CaseIterable {
        case success, failure, refused
    }

    public var action: AuditAction
    public var outcome: Outcome
    public var actor: String?
    public var role: String?
    public var address: String?
    public var requestID: String?
    /// A keyed fingerprint of the object acted on (a teleTAN), when there is one.
    public var subject: String?
    /// Small facts: teleTAN type and expiry, the reason for a refusal, ...
    public var details: [String: String]

    public init(
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
public struct AuditAction: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let signIn: AuditAction = "signin"
    public static let signOut: AuditAction = "signout"
    public static let sessionExpired: AuditAction = "session.expired"
    public static let accessDenied: AuditAction = "access.denied"
    public static let teleTANIssue: AuditAction = "teletan.issue"
}
