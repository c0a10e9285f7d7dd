import TeleTAN

/// Who asks on the internal listener, from a verified bearer token of either kind: a trusted
/// portal's ES256 token or a trusted Keycloak realm's RS256 token.
struct Caller: Sendable, Equatable {
    enum Source: Sendable, Equatable {
        /// A portal's key, by thumbprint (`--trusted-portal-key`).
        case portal(thumbprint: String)
        /// A realm, by its URL as configured (`--trusted-iam`).
        case realm(url: String)
    }

    let username: String
    let roles: [String]
    let source: Source

    /// Which portal or realm vouched for the caller, for the audit trail.
    var auditDetails: [String: String] {
        switch source {
        case .portal(let thumbprint): ["portal": thumbprint]
        case .realm(let url): ["realm": url]
        }
    }

    /// Whether the caller may create a teleTAN of `type`. A realm's token follows CWA's rules
    /// exactly (``CWARoles/permitCreation(roles:typeHeader:)``: `typeHeader` is the
    /// `X-CWA-TELETAN-TYPE` value, nil when absent); a portal's token needs the type's own role,
    /// as it always did (`c19hotline` for TEST, `c19hotline_event` for EVENT).
    func mayCreate(_ type: TeleTANType, typeHeader: String?) -> Bool {
        switch source {
        case .realm: CWARoles.permitCreation(roles: roles, typeHeader: typeHeader)
        case .portal: roles.contains(type == .event ? CWARoles.event : CWARoles.hotline)
        }
    }

    /// Either teleTAN role lets an officer see and revoke the teleTANs they issued.
    var mayManageOwnTeleTANs: Bool {
        roles.contains(CWARoles.hotline) || roles.contains(CWARoles.event)
    }
}
