import Crypto
import Foundation
import JWTKit
import TeleTAN

/// What a portal asserts when it asks the verification server for a teleTAN: which officer,
/// with which CWA roles, for which server (`aud`), for the next minute. Signed with the portal's
/// own ES256 key.
package struct PortalTokenPayload: JWTPayload, Equatable {
    /// The audience a portal names and a verification server expects unless configured
    /// otherwise (`--verification-audience`, `--audience`).
    package static let defaultAudience = "teletan-verification-server"

    package var sub: SubjectClaim
    package var roles: [String]
    /// The server the token is for: a server refuses a token that does not name it, so one
    /// server (or anyone who sees its traffic) cannot replay a portal's token at another.
    package var aud: AudienceClaim
    package var iat: IssuedAtClaim
    package var exp: ExpirationClaim

    package init(username: String, roles: [String], audience: String, issuedAt: Date, lifetime: TimeInterval = 60) {
        sub = SubjectClaim(value: username)
        self.roles = roles
        aud = AudienceClaim(value: [audience])
        iat = IssuedAtClaim(value: issuedAt)
        exp = ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime))
    }

    package func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

/// ES256 key files: `portal keygen` writes them, the portal signs with the private one, the
/// verification server trusts the public ones. A key is named by its thumbprint (the JWT `kid`),
/// which the server records as "which portal asked".
package enum PortalKeys {
    package static let privateKeyFile = "portal-key.pem"
    package static let publicKeyFile = "portal-key.pub.pem"

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Writes a new key pair into `directory`; the private key with mode 0600. Never overwrites.
    package static func generate(into directory: String) throws -> (privateKey: String, publicKey: String) {
        let privatePath = (directory as NSString).appendingPathComponent(privateKeyFile)
        let publicPath = (directory as NSString).appendingPathComponent(publicKeyFile)
        for path in [privatePath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw Failure(description: "\(path) exists; refusing to overwrite a key")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = ES256PrivateKey()
        guard FileManager.default.createFile(atPath: privatePath, contents: Data(key.pemRepresentation.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "cannot write \(privatePath)")
        }
        try Data(key.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: publicPath))
        return (privatePath, publicPath)
    }

    package static func loadPrivateKey(at path: String) throws -> ES256PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read private key \(path)")
        }
        do { return try ES256PrivateKey(pem: data) } catch {
            throw Failure(description: "\(path) is not an ES256 (P-256) private key in PEM format")
        }
    }

    package static func loadPublicKey(at path: String) throws -> ES256PublicKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read public key \(path)")
        }
        do { return try ES256PublicKey(pem: data) } catch {
            throw Failure(description: "\(path) is not an ES256 (P-256) public key in PEM format")
        }
    }

    /// First 16 hex digits of SHA-256 over the public key's PEM form.
    package static func thumbprint(of key: ES256PublicKey) -> String {
        KeyedHasher.hex(SHA256.hash(data: Data(key.pemRepresentation.utf8)).prefix(8))
    }
}

/// Signs short-lived tokens for one portal and one verification server (`audience`).
package struct PortalTokenSigner: Sendable {
    private let keys: JWTKeyCollection
    package let keyID: String
    package let audience: String

    package init(privateKeyPath: String, audience: String = PortalTokenPayload.defaultAudience) async throws {
        let key = try PortalKeys.loadPrivateKey(at: privateKeyPath)
        keyID = PortalKeys.thumbprint(of: key.publicKey)
        self.audience = audience
        keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
    }

    /// A token whose signature has s ≤ n/2: the server refuses the other twin (``ES256Signature``),
    /// and jwt-kit signs either.
    package func token(username: String, roles: [String], now: Date = Date()) async throws -> String {
        let token = try await keys.sign(PortalTokenPayload(username: username, roles: roles, audience: audience, issuedAt: now),
                                        kid: JWKIdentifier(string: keyID))
        guard let dot = token.lastIndex(of: "."), let signature = Base64URL.decode(token[token.index(after: dot)...]) else {
            return token
        }
        return String(token[...dot]) + Base64URL.encode(ES256Signature.lowS(signature))
    }
}

/// Verifies portal tokens against the trusted portals' public keys.
package struct PortalTokenVerifier: Sendable {
    package struct Verified: Sendable, Equatable {
        package let portal: String
        package let payload: PortalTokenPayload
    }

    private let keys: JWTKeyCollection
    package let trustedPortals: [String]
    /// The `aud` a token must name: this server's name.
    package let audience: String

    package init(publicKeyPaths: [String], audience: String = PortalTokenPayload.defaultAudience) async throws {
        self.audience = audience
        keys = JWTKeyCollection()
        var thumbprints: [String] = []
        for path in publicKeyPaths {
            let key = try PortalKeys.loadPublicKey(at: path)
            let thumbprint = PortalKeys.thumbprint(of: key)
            await keys.add(ecdsa: key, kid: JWKIdentifier(string: thumbprint))
            thumbprints.append(thumbprint)
        }
        trustedPortals = thumbprints
    }

    /// Longest lifetime a token may claim (portals sign for 60 s), and how far a portal's clock
    /// may run ahead of ours.
    package static let maximumLifetime: TimeInterval = 300
    package static let allowedClockSkew: TimeInterval = 60

    /// The portal (key thumbprint) and payload, or nil for an unsigned, wrongly signed, expired
    /// or untrusted token, one whose header names another algorithm than ES256, one whose
    /// signature is the malleable (high-S) twin of a valid one, one for another audience (or
    /// none), one issued in the future or valid for longer than ``maximumLifetime``, or one
    /// without a subject. (So `exp` is never more than ``maximumLifetime`` plus
    /// ``allowedClockSkew`` ahead.)
    package func verify(_ token: String, now: Date = Date()) async -> Verified? {
        guard let header = try? DefaultJWTParser().parse(Array(token.utf8), as: PortalTokenPayload.self).header,
              header.alg == "ES256",
              let kid = header.kid, trustedPortals.contains(kid),
              let signature = token.split(separator: ".", omittingEmptySubsequences: false).last.flatMap({ Base64URL.decode($0) }),
              ES256Signature.isLowS(signature),
              let payload = try? await keys.verify(token, as: PortalTokenPayload.self)
        else { return nil }
        let issued = payload.iat.value, expires = payload.exp.value
        guard payload.aud.value.contains(audience),
              expires > now, issued <= now.addingTimeInterval(Self.allowedClockSkew),
              expires.timeIntervalSince(issued) <= Self.maximumLifetime,
              !payload.sub.value.trimmingCharacters(in: .whitespaces).isEmpty
        else { return nil }
        return Verified(portal: kid, payload: payload)
    }
}
