import Logging

/// Who does something, for domain code (issuance, hotline calls, audit review): the
/// person, the role they act in, their session, where the request came from, its id and logger.
/// The web layer builds it from the request; domain code never sees the request itself.
package struct ActingUser: Sendable {
    package let username: String
    /// The role named in the audit trail for this action.
    package let role: Role
    /// Every role the person holds (the verification server is told what they may issue).
    package let roles: Set<Role>
    /// The keyed hash of the session id: what binds one-use forms and a waiting teleTAN to it.
    package let sessionHash: String
    package let address: String?
    package let requestID: String
    package let logger: Logger

    package init(
        username: String, role: Role, roles: Set<Role>, sessionHash: String, address: String?, requestID: String, logger: Logger
    ) {
        self.username = username
        self.role = role
        self.roles = roles
        self.sessionHash = sessionHash
        self.address = address
        self.requestID = requestID
        self.logger = logger
    }
}
