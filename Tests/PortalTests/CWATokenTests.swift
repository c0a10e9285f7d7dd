import Crypto
import Foundation
import JWTKit
import ServiceAuth
import TeleTAN
import TestSupport
import XCTest

/// `--verification-auth cwa`: the key and certificate `portal keygen` makes, the RS256 token a
/// CWA verification server checks (header, claims, signature by the certificate's key), the
/// type header, and the certs document it fetches. (Tests/e2e/test_l_cwa_server.py checks the
/// same against an independent CWA-like stub.)
final class CWATokenTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cwa-key-\(UUID().uuidString)").path
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func generated() throws -> (key: CWASigningKey, keyPath: String, certificatePath: String) {
        let (keyPath, certificatePath) = try CWASigningKey.generate(into: directory, commonName: "teletan-portal-test")
        return (try CWASigningKey.load(keyPath: keyPath, certificatePath: certificatePath), keyPath, certificatePath)
    }

    /// base64url (no padding) → bytes.
    private func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    private func json(_ part: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: XCTUnwrap(decode(part))) as? [String: Any])
    }

    func testKeygenWritesAPrivateRSAKeyOf3072BitsAndItsCertificateAndNeverOverwrites() throws {
        let (key, keyPath, certificatePath) = try generated()
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600, "the private key is readable by its owner only")
        XCTAssertEqual(key.modulus.count * 8, 3072)
        XCTAssertEqual(key.publicExponent, [1, 0, 1])
        let certificate = try String(contentsOfFile: certificatePath, encoding: .utf8)
        XCTAssertTrue(certificate.hasPrefix("-----BEGIN CERTIFICATE-----"))
        XCTAssertFalse(certificate.contains("PRIVATE"))
        XCTAssertEqual(key.keyID, Base64URL.encode(SHA256.hash(data: key.certificateDER)))
        XCTAssertThrowsError(try CWASigningKey.generate(into: directory, commonName: "again")) { error in
            XCTAssertTrue("\(error)".contains("refusing to overwrite"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: certificatePath, encoding: .utf8), certificate)
    }

    func testTokenHasCWAsHeaderAndClaimsAndIsSignedByTheCertificatesKey() async throws {
        let (key, _, certificatePath) = try generated()
        let signer = await CWATokenSigner(key: key)
        let now = Date()
        let token = try await signer.token(username: "tt-event", roles: ["c19hotline_event"], now: now)
        let parts = token.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)

        let header = try json(parts[0])
        XCTAssertEqual(header["alg"] as? String, "RS256")
        XCTAssertEqual(header["typ"] as? String, "JWT")
        XCTAssertEqual(header["kid"] as? String, key.keyID)

        let claims = try json(parts[1])
        XCTAssertEqual(claims["sub"] as? String, "tt-event")
        XCTAssertEqual(claims["preferred_username"] as? String, "tt-event")
        XCTAssertEqual((claims["realm_access"] as? [String: Any])?["roles"] as? [String], ["c19hotline_event"])
        XCTAssertNil(claims["roles"], "CWA reads realm_access.roles, not a top-level roles claim")
        let iat = try XCTUnwrap(claims["iat"] as? Double), exp = try XCTUnwrap(claims["exp"] as? Double)
        XCTAssertEqual(iat, now.timeIntervalSince1970.rounded(.down), accuracy: 1)
        XCTAssertEqual(exp - iat, 60, accuracy: 1)
        XCTAssertEqual(Set(claims.keys), ["sub", "preferred_username", "realm_access", "iat", "exp"])
        let claimsText = String(decoding: try XCTUnwrap(decode(parts[1])), as: UTF8.self)
        XCTAssertNotNil(claimsText.firstMatch(of: /"iat":[0-9]+[,}]/), "whole seconds, as Keycloak writes them: \(claimsText)")
        XCTAssertNotNil(claimsText.firstMatch(of: /"exp":[0-9]+[,}]/), claimsText)

        // Verified with the public key of the certificate file (what the server reads from x5c).
        let verifier = JWTKeyCollection()
        await verifier.add(rsa: try JWTKit.Insecure.RSA.PublicKey(certificatePEM: String(contentsOfFile: certificatePath, encoding: .utf8)),
                           digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.keyID))
        let verified = try await verifier.verify(token, as: CWATokenPayload.self)
        XCTAssertEqual(verified.realmAccess.roles, ["c19hotline_event"])
        // One changed character of the claims: the signature no longer fits.
        let changed = try json(parts[1]).merging(["preferred_username": "someone-else"]) { $1 }
        let forged = [parts[0], Base64URL.encode(try JSONSerialization.data(withJSONObject: changed)), parts[2]].joined(separator: ".")
        do {
            _ = try await verifier.verify(forged, as: CWATokenPayload.self)
            XCTFail("a token with changed claims verified")
        } catch {}
        // Expired a minute later.
        let old = try await signer.token(username: "tt-event", roles: ["c19hotline_event"], now: now.addingTimeInterval(-61))
        do {
            _ = try await verifier.verify(old, as: CWATokenPayload.self)
            XCTFail("a token older than its 60 s verified")
        } catch {}
    }

    func testTypeHeaderAsCWAsPortalSentItAndTodaysFormatUnchanged() async throws {
        let signer = await CWATokenSigner(key: try generated().key)
        XCTAssertNil(signer.typeHeader(for: .test), "CWA's portal sent no header for TEST (the server then requires c19hotline)")
        XCTAssertEqual(signer.typeHeader(for: .event), "EVENT")
        XCTAssertEqual(signer.format, "cwa")

        let keys = try PortalKeys.generate(into: directory + "/portal")
        let portal = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        XCTAssertEqual(portal.typeHeader(for: .test), "TEST")
        XCTAssertEqual(portal.typeHeader(for: .event), "EVENT")
        XCTAssertEqual(portal.format, "portal")
        let header = try json(String(try await portal.token(username: "tt-officer", roles: ["c19hotline"], now: Date()).split(separator: ".")[0]))
        XCTAssertEqual(header["alg"] as? String, "ES256")
    }

    func testCertsDocumentIsKeycloaksFormatWithTheCertificate() throws {
        let (key, _, certificatePath) = try generated()
        let document = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(CertsDocument.json(for: key).utf8)) as? [String: Any])
        XCTAssertEqual(Set(document.keys), ["keys"])
        let keys = try XCTUnwrap(document["keys"] as? [[String: Any]])
        XCTAssertEqual(keys.count, 1)
        let entry = keys[0]
        XCTAssertEqual(entry["kid"] as? String, key.keyID)
        XCTAssertEqual(entry["kty"] as? String, "RSA")
        XCTAssertEqual(entry["alg"] as? String, "RS256")
        XCTAssertEqual(entry["use"] as? String, "sig")
        XCTAssertEqual(entry["e"] as? String, "AQAB")
        XCTAssertEqual(decode(try XCTUnwrap(entry["n"] as? String)).map { [UInt8]($0) }, key.modulus)
        // x5c[0]: standard base64 of the certificate file's DER.
        let x5c = try XCTUnwrap(entry["x5c"] as? [String])
        XCTAssertEqual(x5c.count, 1)
        let pem = try String(contentsOfFile: certificatePath, encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        XCTAssertEqual(x5c[0], body)
        let der = try XCTUnwrap(Data(base64Encoded: x5c[0]))
        XCTAssertEqual(entry["x5t"] as? String, Base64URL.encode(Crypto.Insecure.SHA1.hash(data: der)))
        XCTAssertEqual(entry["x5t#S256"] as? String, Base64URL.encode(SHA256.hash(data: der)))
        XCTAssertFalse(try CertsDocument.json(for: key).contains("\"d\""), "no private part")
    }

    func testStartUpRefusesAShortKeyAndACertificateOfAnotherKey() throws {
        let (_, keyPath, certificatePath) = try generated()
        let short = directory + "/short.pem"
        try Shell.run("/usr/bin/openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", short)
        XCTAssertThrowsError(try CWASigningKey.load(keyPath: short, certificatePath: certificatePath)) { error in
            let failure = error as? CWASigningKey.Failure
            XCTAssertEqual(failure?.setting, .key)
            XCTAssertTrue(failure?.description.contains("2048 bits; at least 3072") == true, "\(error)")
        }
        let ecKey = directory + "/ec.pem"
        try Shell.run("/usr/bin/openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ecKey)
        XCTAssertThrowsError(try CWASigningKey.load(keyPath: ecKey, certificatePath: certificatePath)) { error in
            XCTAssertEqual((error as? CWASigningKey.Failure)?.setting, .key)
        }
        let other = try CWASigningKey.generate(into: directory + "/other", commonName: "other")
        XCTAssertThrowsError(try CWASigningKey.load(keyPath: keyPath, certificatePath: other.certificate)) { error in
            let failure = error as? CWASigningKey.Failure
            XCTAssertEqual(failure?.setting, .certificate)
            XCTAssertTrue(failure?.description.contains("is not the public key of") == true, "\(error)")
        }
        XCTAssertThrowsError(try CWASigningKey.load(keyPath: keyPath, certificatePath: keyPath)) { error in
            XCTAssertEqual((error as? CWASigningKey.Failure)?.setting, .certificate)
        }
    }
}
