import Foundation

/// The identity attached to a request with a valid session.
public struct SignedInUser: Sendable, Equatable {
    public let username: String
    public let roles: Set<Role>
    /// The keyed hash of the session id: the session's database key.
    let sessionHash: String
    /// This session's CSRF token, derived from the session hash with the server key.
    let csrfToken: String

    /// The roles a verification server knows (CWA): TEST teleTANs need `c19hotline`, EVENT
    /// teleTANs `c19hotline_event`.
    var cwaRoles: [String] {
        var result: [String] = []
        if has(anyOf: Role.teleTANIssuers) { result.append("c19hotline") }
        if roles.contains(.event) { result.append("c19hotline_event") }
        return result
    }

    public func has(anyOf required: Set<Role>) -> Bool {
        !roles.isDisjoint(with: required)
    }

    /// The role named in the audit trail for an action that any of `allowed` may take.
    func actingRole(for allowed: Set<Role>) -> Role? {
        roles.intersection(allowed).min()
    }
}
