import Crypto
import Foundation

/// The portal's signing certificate in Keycloak's certs format (a JWKS document), as a CWA
/// verification server fetches it from `${jwt.server}/auth/realms/cwa/protocol/openid-connect/certs`:
/// it takes the first key with `use` `sig` and `alg` `RS256` and the certificate in `x5c[0]`.
/// `n` and `e` are there too, for clients that read only those.
/// (The portal serves it on its metrics listener: `PortalWeb.CertsRoute`.)
package enum CertsDocument {
    struct Key: Encodable {
        let kid: String
        let kty = "RSA"
        let alg = "RS256"
        let use = "sig"
        let n: String
        let e: String
        let x5c: [String]
        let x5t: String
        let x5tS256: String

        enum CodingKeys: String, CodingKey {
            case kid, kty, alg, use, n, e, x5c, x5t
            case x5tS256 = "x5t#S256"
        }
    }

    /// The JSON document with the one key.
    package static func json(for key: CWASigningKey) throws -> String {
        struct Document: Encodable { let keys: [Key] }
        let entry = Key(
            kid: key.keyID, n: Base64URL.encode(key.modulus), e: Base64URL.encode(key.publicExponent),
            x5c: [Data(key.certificateDER).base64EncodedString()],
            x5t: Base64URL.encode(Insecure.SHA1.hash(data: key.certificateDER)),
            x5tS256: Base64URL.encode(SHA256.hash(data: key.certificateDER)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(Document(keys: [entry])), as: UTF8.self)
    }
}
