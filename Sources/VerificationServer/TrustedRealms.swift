import Foundation
import JWTKit
import ServiceAuth

/// The Keycloak realms this server trusts (`--trusted-iam`, any number, none by default), and
/// the verification of their RS256 tokens.
package struct TrustedRealms: Sendable {
    package let realms: [TrustedRealm]

    package init(realms: [TrustedRealm]) {
        self.realms = realms
    }

    /// The caller, nil for a token no realm's key verifies (401), or ``BearerTokenVerifier/RealmUnavailable``
    /// when no realm holds a key for it and a realm could not be asked (503).
    ///
    /// A token with a `kid` is checked with the key of that `kid`; one without, with each realm's
    /// first key (what CWA does for every token). The token must be current (`exp`, `nbf`), end
    /// within minutes (``RealmTokenPayload/isCurrent(at:maximumLifetime:allowedClockSkew:)``) and
    /// name an officer (`preferred_username` or `sub`); its roles are checked by the caller.
    func verify(_ token: String, kid: String?, now: Date) async throws(BearerTokenVerifier.RealmUnavailable) -> Caller? {
        var unavailable: [String] = []
        var judged = false
        for realm in realms {
            switch await realm.key(for: kid) {
            case .key(let key):
                judged = true
                if let payload = try? await key.verifier.verify(token, as: RealmTokenPayload.self),
                   payload.isCurrent(at: now, maximumLifetime: PortalTokenVerifier.maximumLifetime,
                                     allowedClockSkew: PortalTokenVerifier.allowedClockSkew),
                   let username = payload.username {
                    return Caller(username: username, roles: payload.roles, source: .realm(url: realm.url))
                }
            case .unknownKey:
                continue
            case .unavailable:
                unavailable.append(realm.url)
            }
        }
        if !judged && !unavailable.isEmpty {
            throw BearerTokenVerifier.RealmUnavailable(realms: unavailable)
        }
        return nil
    }
}
