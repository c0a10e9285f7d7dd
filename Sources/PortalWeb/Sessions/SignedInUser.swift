import AccessControl
import Foundation

/// The identity attached to a request with a valid session.
package struct SignedInUser: Sendable, Equatable {
    package let username: String
    package let roles: Set<Role>
    /// The keyed hash of the session id: the session's database key.
    package let sessionHash: String
    /// This session's CSRF token, derived from the session hash with the server key.
    package let csrfToken: String

    package init(username: String, roles: Set<Role>, sessionHash: String, csrfToken: String) {
        self.username = username
        self.roles = roles
        self.sessionHash = sessionHash
        self.csrfToken = csrfToken
    }

    package func may(_ permission: Permission) -> Bool {
        roles.allow(permission)
    }
}
