/// A role a signed-in person holds. Roles come from Unix groups at sign-in (see ``RoleGroups``);
/// what each role may do is the table in ``Permission``.
package enum Role: String, Sendable, Codable, CaseIterable, Comparable {
    /// Public health officer: issues TEST teleTANs.
    case officer
    /// Hotline agent: verifies callers and issues TEST teleTANs for them.
    case hotline
    /// Issues EVENT teleTANs for a health authority.
    case event
    /// Reviews the audit trail, sessions and lockouts.
    case admin

    package static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
