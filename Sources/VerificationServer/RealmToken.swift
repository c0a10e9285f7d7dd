import Foundation
import JWTKit

/// The claims this server reads from a Keycloak realm's access token (RS256), as the CWA
/// verification server reads them: the roles in `realm_access.roles`, not a top-level `roles`.
/// Every other claim of the token is ignored.
struct RealmTokenPayload: JWTPayload {
    struct RealmAccess: Codable {
        var roles: [String]?
    }

    var exp: ExpirationClaim
    var nbf: NotBeforeClaim?
    var sub: String?
    var preferred_username: String?
    var realm_access: RealmAccess?

    var roles: [String] { realm_access?.roles ?? [] }

    /// The officer: Keycloak's `preferred_username`, else `sub`; nil when neither is a name.
    var username: String? {
        [preferred_username, sub].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
    }

    /// Only the signature is checked by jwt-kit; ``RealmTokenPayload/isCurrent(at:allowedClockSkew:)`` checks the
    /// times with the server's clock.
    func verify(using algorithm: some JWTAlgorithm) throws {}

    /// `exp` in the future (no leeway, as for portal tokens) and at most `maximumLifetime` plus
    /// `allowedClockSkew` ahead, so that a stolen token is of use for minutes, not for as long as
    /// its realm was configured to issue it (CWA's Keycloak: 60 s; Keycloak's default: 5 minutes,
    /// hence the skew for a realm clock slightly ahead); `nbf`, when present, not later than the
    /// clock skew allowed for a portal's `iat`.
    func isCurrent(at now: Date, maximumLifetime: TimeInterval, allowedClockSkew: TimeInterval) -> Bool {
        exp.value > now && exp.value <= now.addingTimeInterval(maximumLifetime + allowedClockSkew)
            && (nbf.map { $0.value <= now.addingTimeInterval(allowedClockSkew) } ?? true)
    }
}

/// CWA's role rules for `POST /version/v1/tan/teletan`, taken from its `InternalTanController`
/// and `JwtService` (docs/deployment.md, "Using a Keycloak realm with this verification server").
enum CWARoles {
    static let hotline = "c19hotline"
    static let event = "c19hotline_event"
    static let healthAuthority = "c19healthauthority"
    static let all: Set<String> = [hotline, event, healthAuthority]

    /// No `X-CWA-TELETAN-TYPE` header: `c19hotline` required; `EVENT`: `c19hotline_event`
    /// required; `TEST`: no particular role. In every case at least one of the three CWA roles.
    /// `typeHeader` is the header's value, upper-cased, or nil when the request has none.
    static func permitCreation(roles: [String], typeHeader: String?) -> Bool {
        let held = Set(roles)
        guard !held.isDisjoint(with: all) else { return false }
        switch typeHeader {
        case nil: return held.contains(hotline)
        case "EVENT": return held.contains(event)
        default: return true
        }
    }
}
