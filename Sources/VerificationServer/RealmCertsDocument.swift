import Foundation
import JWTKit
import X509

/// One signing key of a realm: the public key of the X.509 certificate in its `x5c[0]`.
package struct RealmKey: Sendable {
    let kid: String?
    /// Holds only this key, as its default, so it verifies a token whatever `kid` the token names.
    let verifier: JWTKeyCollection
}

/// Keycloak's certs document (`{"keys":[{"kid","kty","alg","use","n","e","x5c",...}]}`), read as
/// the CWA verification server reads it: only keys with `use: sig` and `alg: RS256`, and of those
/// only the certificate in `x5c[0]` (base64 DER), whose public key must be RSA. `n` and `e` are
/// not used: a key without a certificate is skipped. The certificate is only a container for the
/// key (as in CWA): its dates and issuer are not checked.
enum RealmCertsDocument {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    private struct Document: Decodable {
        struct Key: Decodable {
            var kid: String?
            var alg: String?
            var use: String?
            var x5c: [String]?
        }
        var keys: [Key]
    }

    /// The usable keys in the document's order, and how many sig/RS256 entries were skipped for
    /// lack of a readable RSA certificate.
    static func keys(from data: Data) async throws -> (keys: [RealmKey], skipped: Int) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw Malformed(description: "not a certs document (JSON with a `keys` list)")
        }
        var keys: [RealmKey] = []
        var skipped = 0
        for entry in document.keys where entry.use == "sig" && entry.alg == "RS256" {
            guard let base64 = entry.x5c?.first, let der = Data(base64Encoded: base64),
                  let certificate = try? Certificate(derEncoded: Array(der)),
                  let pem = try? certificate.publicKey.serializeAsPEM().pemString,
                  let publicKey = try? Insecure.RSA.PublicKey(pem: pem)
            else {
                skipped += 1
                continue
            }
            let verifier = JWTKeyCollection()
            await verifier.add(rsa: publicKey, digestAlgorithm: .sha256)
            keys.append(RealmKey(kid: entry.kid, verifier: verifier))
        }
        return (keys, skipped)
    }
}
