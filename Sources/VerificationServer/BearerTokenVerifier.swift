import Foundation
import ServiceAuth

/// The internal listener's bearer tokens: the header's `alg` decides who may have signed it.
/// `ES256` goes to the trusted portals' keys, `RS256` to the trusted Keycloak realms; every
/// other algorithm (`none`, HS256 and the rest) is refused before any key is looked at, so a
/// realm's public key can never serve as an HMAC secret (algorithm confusion).
struct BearerTokenVerifier: Sendable {
    /// A realm had to be asked for its keys and could not be: answered 503, not 401.
    struct RealmUnavailable: Error {
        let realms: [String]
    }

    let portals: PortalTokenVerifier
    let realms: TrustedRealms
    let now: @Sendable () -> Date

    /// The caller, or nil (401) for a token no trusted portal or realm signed, an expired one,
    /// one without a name, one with another algorithm, or one with a `crit` header: it names
    /// extensions the signer requires the reader to understand (RFC 7515 §4.1.11), and this
    /// server understands none (nor does jwt-kit look at `crit`).
    func verify(_ token: String) async throws(RealmUnavailable) -> Caller? {
        guard let header = TokenHeader(token), !header.hasCritical else { return nil }
        switch header.alg {
        case "ES256":
            guard let verified = await portals.verify(token, now: now()) else { return nil }
            return Caller(username: verified.payload.sub.value, roles: verified.payload.roles,
                          source: .portal(thumbprint: verified.portal))
        case "RS256":
            return try await realms.verify(token, kid: header.kid, now: now())
        default:
            return nil
        }
    }
}

/// `alg`, `kid` and whether there is a `crit` of a compact JWS, read before the signature is
/// checked (to pick the key).
struct TokenHeader: Decodable, Equatable {
    let alg: String?
    let kid: String?
    /// `crit` is there, whatever its value (even an empty list, which RFC 7515 forbids).
    let hasCritical: Bool

    enum CodingKeys: String, CodingKey { case alg, kid, crit }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        alg = try container.decodeIfPresent(String.self, forKey: .alg)
        kid = try container.decodeIfPresent(String.self, forKey: .kid)
        hasCritical = container.contains(.crit)
    }

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count <= 4096,
              let data = Base64URL.decode(parts[0]),
              let header = try? JSONDecoder().decode(TokenHeader.self, from: Data(data))
        else { return nil }
        self = header
    }
}
