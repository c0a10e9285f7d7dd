/// What a signed-in person may do. Route groups declare the permission they need
/// (`PortalWeb.Access`), and ``granted`` is the one table that says which role holds which.
package enum Permission: String, Sendable, CaseIterable, Comparable {
    case issueTestTeleTAN = "issue_test_teletan"
    case issueEventTeleTAN = "issue_event_teletan"
    case workHotlineCalls = "work_hotline_calls"
    /// One's own teleTANs: the result page that shows a new one, and "My recent teleTANs"
    /// with status and revocation.
    case seeOwnTeleTANs = "see_own_teletans"
    /// The hotline's counts: calls by outcome, waiting callbacks, teleTANs per day.
    case viewHotlineOverview = "view_hotline_overview"
    case reviewAuditTrail = "review_audit_trail"
    case manageSessionsAndLockouts = "manage_sessions_and_lockouts"
    /// Today's daily quotas of teleTANs: see them, and raise one until midnight.
    case manageDailyQuota = "manage_daily_quota"

    /// The permission table: every role's permissions, and nothing else grants any.
    package static let granted: [Role: Set<Permission>] = [
        .officer: [.issueTestTeleTAN, .seeOwnTeleTANs],
        // Hotline agents issue only within a call, so that each of their teleTANs has its checks.
        .hotline: [.workHotlineCalls, .seeOwnTeleTANs, .viewHotlineOverview],
        .event: [.issueEventTeleTAN, .seeOwnTeleTANs],
        .admin: [.reviewAuditTrail, .manageSessionsAndLockouts, .manageDailyQuota, .viewHotlineOverview],
    ]

    /// The roles that hold this permission.
    package var roles: Set<Role> {
        Set(Role.allCases.filter { Self.granted[$0, default: []].contains(self) })
    }

    package static func < (lhs: Permission, rhs: Permission) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

extension Set where Element == Role {
    /// True when one of these roles holds `permission`.
    package func allow(_ permission: Permission) -> Bool {
        !isDisjoint(with: permission.roles)
    }

    /// The role named in the audit trail for an action under `permission`: the first role, in
    /// ``Role`` order, that holds it.
    package func acting(for permission: Permission) -> Role? {
        intersection(permission.roles).min()
    }

    /// The roles a CWA verification server knows: TEST teleTANs (an officer's, or a hotline
    /// call's) need `c19hotline`, EVENT teleTANs `c19hotline_event`.
    package var cwaRoles: [String] {
        var result: [String] = []
        if allow(.issueTestTeleTAN) || allow(.workHotlineCalls) { result.append("c19hotline") }
        if allow(.issueEventTeleTAN) { result.append("c19hotline_event") }
        return result
    }

    /// "officer,admin": how sessions and the audit trail store a set of roles.
    package var joined: String {
        sorted().map(\.rawValue).joined(separator: ",")
    }
}
