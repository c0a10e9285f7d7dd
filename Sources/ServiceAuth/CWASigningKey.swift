import Crypto
import CryptoExtras
import Foundation
import JWTKit
import X509

/// The portal's key for `--verification-auth cwa`: an RSA private key (at least 3072 bits) and
/// the X.509 certificate of its public key, which the portal publishes in Keycloak's certs format
/// so that a CWA verification server finds it where it looks for its identity server's key.
/// `portal keygen --verification-auth cwa` writes both; the certificate may as well come from the
/// authority's own CA, as long as it holds this key's public key.
package struct CWASigningKey: Sendable {
    /// RSA keys shorter than this are refused (the portal signs for years with one key).
    package static let minimumBits = 3072
    package static let privateKeyFile = "cwa-key.pem"
    package static let certificateFile = "cwa-certificate.pem"
    /// How long a certificate made by `portal keygen` is valid (a CWA server does not check it;
    /// the date tells operators when to rotate).
    package static let certificateValidity: TimeInterval = 2 * 365 * 24 * 3600

    package struct Failure: Error, CustomStringConvertible {
        /// Which file is wrong, so that the command can name its flag.
        package enum Setting: Sendable { case key, certificate }
        package let setting: Setting
        package let description: String
    }

    package let privateKey: JWTKit.Insecure.RSA.PrivateKey
    /// The certificate, DER-encoded: the certs document's `x5c[0]`.
    package let certificateDER: [UInt8]
    package let modulus: [UInt8]
    package let publicExponent: [UInt8]

    /// SHA-256 over the certificate's DER form, base64url without padding: the token's `kid`
    /// and the certs document's `x5t#S256`.
    package var keyID: String { Base64URL.encode(SHA256.hash(data: certificateDER)) }

    /// Reads the key and the certificate and checks that they belong together.
    package static func load(keyPath: String, certificatePath: String) throws -> CWASigningKey {
        guard let keyData = FileManager.default.contents(atPath: keyPath), let keyPEM = String(data: keyData, encoding: .utf8) else {
            throw Failure(setting: .key, description: "cannot read the private key '\(keyPath)'")
        }
        // Parsed leniently first (1024 bits and up), so that a short key gets its own message.
        guard let backing = try? _RSA.Signing.PrivateKey(unsafePEMRepresentation: keyPEM) else {
            throw Failure(setting: .key, description: "'\(keyPath)' is not an RSA private key in PEM format (at least \(minimumBits) bits)")
        }
        guard backing.keySizeInBits >= minimumBits else {
            throw Failure(setting: .key, description: "'\(keyPath)' is an RSA key of \(backing.keySizeInBits) bits; at least \(minimumBits) are required")
        }
        guard let certificatePEM = FileManager.default.contents(atPath: certificatePath).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw Failure(setting: .certificate, description: "cannot read the certificate '\(certificatePath)'")
        }
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
        } catch {
            throw Failure(setting: .certificate, description: "'\(certificatePath)' is not an X.509 certificate in PEM format")
        }
        guard certificate.publicKey == Certificate.PublicKey(backing.publicKey) else {
            throw Failure(setting: .certificate, description: "the public key of '\(certificatePath)' is not the public key of '\(keyPath)'")
        }
        return try CWASigningKey(key: backing, certificate: certificate)
    }

    private init(key: _RSA.Signing.PrivateKey, certificate: Certificate) throws {
        privateKey = try JWTKit.Insecure.RSA.PrivateKey(backing: key)
        certificateDER = try certificate.serializeAsPEM().derBytes
        let primitives = try key.publicKey.getKeyPrimitives()
        modulus = Array(primitives.modulus.drop { $0 == 0 })
        publicExponent = Array(primitives.publicExponent.drop { $0 == 0 })
    }

    /// Writes a new RSA key (mode 0600) and a self-signed certificate of it into `directory`.
    /// Never overwrites.
    package static func generate(into directory: String, commonName: String, now: Date = Date()) throws -> (privateKey: String, certificate: String) {
        let keyPath = (directory as NSString).appendingPathComponent(privateKeyFile)
        let certificatePath = (directory as NSString).appendingPathComponent(certificateFile)
        for path in [keyPath, certificatePath] where FileManager.default.fileExists(atPath: path) {
            throw Failure(setting: path == keyPath ? .key : .certificate, description: "\(path) exists; refusing to overwrite a key")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = try _RSA.Signing.PrivateKey(keySize: .bits3072)
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(certificateValidity),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        guard FileManager.default.createFile(atPath: keyPath, contents: Data(key.pemRepresentation.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw Failure(setting: .key, description: "cannot write \(keyPath)")
        }
        try Data(certificate.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: certificatePath))
        return (keyPath, certificatePath)
    }
}

/// base64url without padding (RFC 7515), as JOSE writes keys and thumbprints.
package enum Base64URL {
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// nil for text that is not base64url (with or without padding).
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
