import Foundation
import HTTPTypes
import JWTKit
import ServiceAuth
import TestSupport
import XCTest
@testable import VerificationServer

/// The bearer tokens' third look (issue 28): a portal token names this server as its audience,
/// a realm token's `exp` is at most minutes ahead, the malleable twin of an ES256 signature and
/// a `crit` header the server does not understand are refused. CWA's own tokens (no `aud`) keep
/// working.
final class TokenHardeningTests: XCTestCase {
    func testAPortalTokenForAnotherServerIsRefused() async throws {
        try await ServerUnderTest.run(configure: { $0.audience = "verification-a" }) { s in
            let forThisServer = try await PortalTokenSigner(privateKeyPath: s.privateKeyPath, audience: "verification-a")
            let forAnother = try await PortalTokenSigner(privateKeyPath: s.privateKeyPath, audience: "verification-b")
            let refused = try await s.createTeleTAN(token: try await forAnother.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now))
            XCTAssertEqual(refused.status, .unauthorized, refused.body)
            let now = Int(s.clock.now.timeIntervalSince1970)
            let header: [String: Any] = ["alg": "ES256", "typ": "JWT", "kid": s.signer.keyID]
            let claims: [String: Any] = ["sub": "officer-a", "roles": ["c19hotline"], "iat": now, "exp": now + 60]
            let withoutAudience = try await s.createTeleTAN(token: try s.signed(header: header, claims: claims))
            XCTAssertEqual(withoutAudience.status, .unauthorized, "a token without aud is for any server")
            var listed = claims
            listed["aud"] = ["verification-b", "verification-a"]
            let amongOthers = try await s.createTeleTAN(token: try s.signed(header: header, claims: listed))
            XCTAssertEqual(amongOthers.status, .created, "RFC 7519: aud may list several audiences")
            let accepted = try await s.createTeleTAN(token: try await forThisServer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now))
            XCTAssertEqual(accepted.status, .created, accepted.body)
        }
    }

    func testByDefaultPortalAndServerAgreeOnTheAudience() async throws {
        try await ServerUnderTest.run { s in
            XCTAssertEqual(s.server.configuration.audience, PortalTokenPayload.defaultAudience)
            let token = try await s.signer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now)
            let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(XCTUnwrap(Base64URL.decode(token.split(separator: ".")[1])))) as? [String: Any])
            XCTAssertEqual(claims["aud"] as? String, PortalTokenPayload.defaultAudience)
            let reply = try await s.createTeleTAN(token: token)
            XCTAssertEqual(reply.status, .created, reply.body)
        }
    }

    func testTheMalleableTwinOfASignatureIsRefused() async throws {
        try await ServerUnderTest.run { s in
            let token = try await s.signer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now)
            let parts = token.split(separator: ".")
            let signature = try XCTUnwrap(Base64URL.decode(parts[2]))
            XCTAssertEqual(signature.count, 64)
            // (r, s) and (r, n - s) both verify; only the one with s <= n/2 is accepted.
            let twin = ES256Signature.twin(Array(signature))
            let (low, high) = ES256Signature.isLowS(Array(signature)) ? (Array(signature), twin) : (twin, Array(signature))
            XCTAssertFalse(ES256Signature.isLowS(high))
            let refused = try await s.createTeleTAN(token: "\(parts[0]).\(parts[1]).\(Base64URL.encode(high))")
            XCTAssertEqual(refused.status, .unauthorized, "high-S twin")
            let accepted = try await s.createTeleTAN(token: "\(parts[0]).\(parts[1]).\(Base64URL.encode(low))")
            XCTAssertEqual(accepted.status, .created, accepted.body)
        }
    }

    func testThePortalSignsOnlyLowS() async throws {
        try await ServerUnderTest.run { s in
            for _ in 0..<24 {
                let token = try await s.signer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now)
                let signature = try XCTUnwrap(Base64URL.decode(token.split(separator: ".")[2]))
                XCTAssertTrue(ES256Signature.isLowS(Array(signature)), token)
            }
        }
    }

    func testACriticalHeaderTheServerDoesNotUnderstandIsRefused() async throws {
        let realm = try await FakeRealm()
        try await ServerUnderTest.run(configure: { $0.trustedRealms = ["http://iam.test"] },
                                      certsFetcher: FakeCertsFetcher(document: realm.certsDocument)) { s in
            let now = Int(s.clock.now.timeIntervalSince1970)
            let claims: [String: Any] = ["sub": "officer-a", "roles": ["c19hotline"], "iat": now, "exp": now + 60,
                                         "aud": PortalTokenPayload.defaultAudience]
            let header: [String: Any] = ["alg": "ES256", "typ": "JWT", "kid": s.signer.keyID]
            for crit: Any in [["exp"], ["b64"], [String](), "exp"] {
                var critical = header
                critical["crit"] = crit
                let refused = try await s.createTeleTAN(token: try s.signed(header: critical, claims: claims))
                XCTAssertEqual(refused.status, .unauthorized, "portal token, crit \(crit)")
            }
            let control = try await s.createTeleTAN(token: try s.signed(header: header, claims: claims))
            XCTAssertEqual(control.status, .created, control.body)

            var realmHeader = JWTHeader()
            realmHeader.crit = ["http://example.test/unknown"]
            var payload = RealmTokenPayload(exp: ExpirationClaim(value: s.clock.now.addingTimeInterval(60)))
            payload.preferred_username = "officer-k"
            payload.realm_access = .init(roles: ["c19hotline"])
            let realmToken = try await realm.signer.sign(payload, kid: JWKIdentifier(string: realm.kid), header: realmHeader)
            let realmRefused = try await s.createTeleTAN(token: realmToken, type: nil)
            XCTAssertEqual(realmRefused.status, .unauthorized, "realm token with crit")
        }
    }

    func testARealmTokenMayNotLiveLongerThanFiveMinutes() async throws {
        let realm = try await FakeRealm()
        try await ServerUnderTest.run(configure: { $0.trustedRealms = ["http://iam.test"] },
                                      certsFetcher: FakeCertsFetcher(document: realm.certsDocument)) { s in
            let now = s.clock.now
            // CWA's Keycloak: 60 s; Keycloak's default: 5 minutes (with a realm clock a little ahead).
            for lifetime: TimeInterval in [60, 300, 330] {
                let reply = try await s.createTeleTAN(token: try await realm.token(roles: ["c19hotline"], now: now, lifetime: lifetime), type: nil)
                XCTAssertEqual(reply.status, .created, "lifetime \(lifetime): \(reply.body)")
            }
            for lifetime: TimeInterval in [361, 3600, 10 * 365 * 86400] {
                let reply = try await s.createTeleTAN(token: try await realm.token(roles: ["c19hotline"], now: now, lifetime: lifetime), type: nil)
                XCTAssertEqual(reply.status, .unauthorized, "lifetime \(lifetime)")
            }
        }
    }
}
