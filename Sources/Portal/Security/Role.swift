/// What a signed-in person may do. Roles come from Unix groups at sign-in (see ``RoleGroups``).
public enum Role: String, Sendable, Codable, CaseIterable, Comparable {
    /// Issues TEST teleTANs.
    case officer
    /// Verifies callers and issues TEST teleTANs for them (hotline workflows).
    case hotline
    /// Issues EVENT teleTANs.
    case event
    /// Reviews the audit trail.
    case admin

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// Roles that may issue TEST teleTANs.
    public static let teleTANIssuers: Set<Role> = [.officer, .hotline]
}
