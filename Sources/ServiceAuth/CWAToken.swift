import Foundation
import JWTKit
import TeleTAN

/// The claims of a token in CWA's format (`--verification-auth cwa`), as Keycloak issued them to
/// CWA's portal: the officer as `sub` and `preferred_username`, the CWA roles under
/// `realm_access.roles`, valid for a minute. A CWA verification server reads only the signature,
/// `exp` and `realm_access`; the rest is for people reading its logs.
package struct CWATokenPayload: JWTPayload, Equatable {
    package struct RealmAccess: Codable, Equatable, Sendable {
        package var roles: [String]
    }

    package var sub: SubjectClaim
    package var preferredUsername: String
    package var realmAccess: RealmAccess
    package var iat: IssuedAtClaim
    package var exp: ExpirationClaim

    enum CodingKeys: String, CodingKey {
        case sub, iat, exp
        case preferredUsername = "preferred_username"
        case realmAccess = "realm_access"
    }

    package init(username: String, roles: [String], issuedAt: Date, lifetime: TimeInterval = CWATokenSigner.lifetime) {
        sub = SubjectClaim(value: username)
        preferredUsername = username
        realmAccess = RealmAccess(roles: roles)
        iat = IssuedAtClaim(value: issuedAt)
        exp = ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime))
    }

    package func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

/// Signs CWA-format tokens (RS256, header `kid` = the certificate's SHA-256 thumbprint) and sends
/// the type header as CWA's portal did: none for TEST (the server then requires `c19hotline`),
/// `EVENT` for EVENT (the server requires `c19hotline_event`).
package struct CWATokenSigner: VerificationAuth {
    /// Keycloak's access tokens for CWA's portal lived this long; so do ours.
    package static let lifetime: TimeInterval = 60

    private let keys: JWTKeyCollection
    package let keyID: String

    package init(key: CWASigningKey) async {
        keyID = key.keyID
        keys = JWTKeyCollection()
        // Whole seconds in iat and exp, as Keycloak writes them (jwt-kit's default has fractions).
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .integerSecondsSince1970
        await keys.add(rsa: key.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: keyID),
                       serializer: DefaultJWTSerializer(jsonEncoder: encoder))
    }

    package var format: String { "cwa" }

    package func token(username: String, roles: [String], now: Date) async throws -> String {
        try await keys.sign(CWATokenPayload(username: username, roles: roles, issuedAt: now), kid: JWKIdentifier(string: keyID))
    }

    package func typeHeader(for type: TeleTANType) -> String? {
        switch type {
        case .test: nil
        case .event: type.rawValue
        }
    }

    package var refusalHint: String {
        "check that the server fetches this portal's certs document (its jwt.server must be the portal's metrics listener, "
            + "which serves --verification-certificate), that the two clocks agree (tokens live \(Int(Self.lifetime)) s), "
            + "and that the server expects CWA tokens (else --verification-auth portal)"
    }
}
