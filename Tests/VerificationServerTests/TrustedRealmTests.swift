import CryptoExtras
import FluentKit
import Foundation
import HTTPTypes
import Storage
import JWTKit
import TestSupport
import X509
import XCTest
@testable import VerificationServer

/// A Keycloak-like realm in memory: an RSA key, its self-signed certificate, the certs document.
struct FakeRealm: Sendable {
    let kid: String
    let signer: JWTKeyCollection
    let certificateBase64: String

    init(kid: String = "realm-key-1") async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName("cwa") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: certificateKey.publicKey,
            notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(3600),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: Certificate.Extensions(), issuerPrivateKey: certificateKey)
        self.kid = kid
        certificateBase64 = Data(try certificate.serializeAsPEM().derBytes).base64EncodedString()
        signer = JWTKeyCollection()
        await signer.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
    }

    /// Keycloak's shape, with an encryption key first (it must be skipped).
    var certsDocument: Data {
        let keys: [[String: Any]] = [
            ["kid": "enc-key", "kty": "RSA", "alg": "RSA-OAEP", "use": "enc", "x5c": [certificateBase64]],
            ["kid": kid, "kty": "RSA", "alg": "RS256", "use": "sig", "x5c": [certificateBase64]],
        ]
        return try! JSONSerialization.data(withJSONObject: ["keys": keys])
    }

    func token(roles: [String], username: String = "officer-k", now: Date, lifetime: TimeInterval = 300) async throws -> String {
        var payload = RealmTokenPayload(exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)))
        payload.preferred_username = username
        payload.sub = UUID().uuidString
        payload.realm_access = .init(roles: roles)
        return try await signer.sign(payload, kid: JWKIdentifier(string: kid))
    }
}

/// Serves one document (or fails), counts the fetches and can hold each fetch for a while.
final class FakeCertsFetcher: RealmCertsFetching, @unchecked Sendable {
    private let lock = NSLock()
    private var _document: Data?
    private var _count = 0
    let delay: Duration

    init(document: Data?, delay: Duration = .zero) {
        _document = document
        self.delay = delay
    }

    var count: Int { lock.withLock { _count } }
    func serve(_ document: Data?) { lock.withLock { _document = document } }

    func certs(at url: String) async throws -> Data {
        let document = lock.withLock { _count += 1; return _document }
        if delay > .zero { try await Task.sleep(for: delay) }
        guard let document else { throw RealmCertsFetchFailure("refused") }
        return document
    }

    func shutdown() async {}
}

final class TrustedRealmTests: XCTestCase {
    func testCWARoleRulesAsInCWAsController() {
        let cases: [([String], String?, Bool)] = [
            (["c19hotline"], nil, true),
            (["c19hotline_event"], nil, false),
            (["c19healthauthority"], nil, false),
            (["c19hotline_event"], "EVENT", true),
            (["c19hotline"], "EVENT", false),
            (["c19healthauthority"], "EVENT", false),
            (["c19hotline"], "TEST", true),
            (["c19hotline_event"], "TEST", true),
            (["c19healthauthority"], "TEST", true),
            ([], "TEST", false),
            (["offline_access", "uma_authorization"], "TEST", false),
            ([], nil, false),
            ([], "EVENT", false),
        ]
        for (roles, header, allowed) in cases {
            XCTAssertEqual(CWARoles.permitCreation(roles: roles, typeHeader: header), allowed, "\(roles) \(header ?? "no header")")
        }
    }

    func testPortalTokensKeepTheirOwnRule() {
        let portal = Caller(username: "a", roles: ["c19healthauthority"], source: .portal(thumbprint: "x"))
        XCTAssertFalse(portal.mayCreate(.test, typeHeader: "TEST"), "a portal token needs c19hotline for TEST")
        let realm = Caller(username: "a", roles: ["c19healthauthority"], source: .realm(url: "http://iam"))
        XCTAssertTrue(realm.mayCreate(.test, typeHeader: "TEST"))
        XCTAssertFalse(realm.mayCreate(.test, typeHeader: nil))
    }

    func testRealmURLs() throws {
        XCTAssertEqual(try TrustedRealm.normalizedURL("https://iam.example.org/"), "https://iam.example.org")
        XCTAssertEqual(try TrustedRealm.normalizedURL("http://127.0.0.1:8080"), "http://127.0.0.1:8080")
        for bad in ["iam.example.org", "ftp://iam", "http://user:pw@iam", "http://iam?x=1",
                    "http://iam/auth/realms/cwa", "http://iam/auth/realms/cwa/protocol/openid-connect/certs", "http://"] {
            XCTAssertThrowsError(try TrustedRealm.normalizedURL(bad), bad)
        }
    }

    func testUnknownKidsFetchAtMostOncePerIntervalAndConcurrentLookupsShareOneFetch() async throws {
        let realm = try await FakeRealm()
        let fetcher = FakeCertsFetcher(document: realm.certsDocument, delay: .milliseconds(200))
        let clock = TestClock()
        let trusted = TrustedRealm(url: "http://iam", fetcher: fetcher, logger: TestDatabases.testLogger, now: clock.function)
        // 50 concurrent lookups, made-up kids and the real one: one fetch between them, and every
        // lookup waits for it (the real kid is found by each, none is answered "unavailable").
        let found = await withTaskGroup(of: Bool?.self) { group in
            for index in 0..<50 {
                group.addTask {
                    switch await trusted.key(for: index % 2 == 0 ? realm.kid : "made-up-\(index)") {
                    case .key: true
                    case .unknownKey: false
                    case .unavailable: nil
                    }
                }
            }
            return await group.reduce(into: [Bool?]()) { $0.append($1) }
        }
        XCTAssertEqual(fetcher.count, 1)
        XCTAssertEqual(found.filter { $0 == true }.count, 25, "\(found)")
        XCTAssertEqual(found.filter { $0 == false }.count, 25, "\(found)")
        // More made-up kids within the interval: no fetch; the realm's keys are known, so 401.
        for index in 0..<20 {
            guard case .unknownKey = await trusted.key(for: "again-\(index)") else { return XCTFail("expected unknownKey") }
        }
        XCTAssertEqual(fetcher.count, 1)
        guard case .key = await trusted.key(for: realm.kid) else { return XCTFail("the realm's key") }
        guard case .key = await trusted.key(for: nil) else { return XCTFail("no kid: the first sig/RS256 key") }
        XCTAssertEqual(fetcher.count, 1)
        clock.advance(seconds: 10)
        _ = await trusted.key(for: "after-the-interval")
        XCTAssertEqual(fetcher.count, 2)
        // Keys older than five minutes are fetched again on the next use, however well they fit.
        clock.advance(seconds: 301)
        guard case .key = await trusted.key(for: realm.kid) else { return XCTFail("the realm's key") }
        XCTAssertEqual(fetcher.count, 3)
    }

    func testAnUnreachableRealmIsUnavailableUntilItAnswersAndCachedKeysOutliveAnOutage() async throws {
        let realm = try await FakeRealm()
        let fetcher = FakeCertsFetcher(document: nil)
        let clock = TestClock()
        let trusted = TrustedRealm(url: "http://iam", fetcher: fetcher, logger: TestDatabases.testLogger, now: clock.function)
        guard case .unavailable = await trusted.key(for: realm.kid) else { return XCTFail("never fetched: unavailable") }
        guard case .unavailable = await trusted.key(for: realm.kid) else { return XCTFail("still unavailable") }
        XCTAssertEqual(fetcher.count, 1, "no second fetch within the interval")
        fetcher.serve(realm.certsDocument)
        clock.advance(seconds: 10)
        guard case .key = await trusted.key(for: realm.kid) else { return XCTFail("recovered") }
        // The realm goes away: its cached key keeps working; an unknown kid cannot be decided.
        fetcher.serve(nil)
        clock.advance(seconds: 10)
        guard case .unavailable = await trusted.key(for: "rotated") else { return XCTFail("unknown kid, realm down") }
        guard case .key = await trusted.key(for: realm.kid) else { return XCTFail("cached key") }
        // A malformed document counts as no answer.
        fetcher.serve(Data("<html>".utf8))
        clock.advance(seconds: 10)
        guard case .unavailable = await trusted.key(for: "rotated-again") else { return XCTFail("malformed document") }
    }

    func testRealmTokensThroughTheInternalListener() async throws {
        let realm = try await FakeRealm()
        let other = try await FakeRealm(kid: realm.kid)  // another key under the same kid
        let fetcher = FakeCertsFetcher(document: realm.certsDocument)
        try await ServerUnderTest.run(configure: { $0.trustedRealms = ["http://iam.test"] }, certsFetcher: fetcher) { s in
            func create(_ token: String, type: String?) async throws -> ServerUnderTest.Reply {
                var headers: HTTPFields = [.authorization: "Bearer \(token)"]
                if let type { headers[HTTPField.Name("X-CWA-TELETAN-TYPE")!] = type }
                return try await s.post(s.internal, "/version/v1/tan/teletan", headers: headers)
            }
            fetcher.serve(realm.certsDocument)  // once per test database: the last run ended with the realm down
            let now = s.clock.now
            let test = try await create(try await realm.token(roles: ["c19hotline"], now: now), type: nil)
            XCTAssertEqual(test.status, .created, test.body)
            let event = try await create(try await realm.token(roles: ["c19hotline_event"], now: now), type: "EVENT")
            XCTAssertEqual(event.status, .created, event.body)
            let authority = try await create(try await realm.token(roles: ["c19healthauthority"], now: now), type: "TEST")
            XCTAssertEqual(authority.status, .created, "TEST with the header: any CWA role")
            for (roles, type) in [([String](), "TEST"), (["c19hotline_event"], nil), (["c19hotline"], "EVENT")] {
                let refused = try await create(try await realm.token(roles: roles, now: now), type: type)
                XCTAssertEqual(refused.status, .unauthorized, "\(roles) \(type ?? "-")")
                XCTAssertEqual(refused.json["status"] as? Int, 401)
            }
            let expired = try await create(try await realm.token(roles: ["c19hotline"], now: now, lifetime: -1), type: nil)
            XCTAssertEqual(expired.status, .unauthorized)
            let forged = try await create(try await other.token(roles: ["c19hotline"], now: now), type: nil)
            XCTAssertEqual(forged.status, .unauthorized)
            // The same claims signed with HMAC, the certificate as the secret: refused before any key.
            let hmac = JWTKeyCollection()
            await hmac.add(hmac: HMACKey(from: realm.certificateBase64), digestAlgorithm: .sha256, kid: JWKIdentifier(string: realm.kid))
            var payload = RealmTokenPayload(exp: ExpirationClaim(value: now.addingTimeInterval(60)))
            payload.preferred_username = "officer-k"
            payload.realm_access = .init(roles: ["c19hotline"])
            let confused = try await create(try await hmac.sign(payload, kid: JWKIdentifier(string: realm.kid)), type: nil)
            XCTAssertEqual(confused.status, .unauthorized)

            let audit = try await sql(s.server.database.database(logger: TestDatabases.testLogger))
                .raw("SELECT details FROM audit_log WHERE action = 'teletan.create' AND outcome = 'success'").all()
                .map { try $0.decode(column: "details", as: String.self) }
            XCTAssertTrue(audit.contains { $0.contains("http://iam.test") }, "the realm is recorded with the officer: \(audit)")

            // Realm down, unknown kid: 503 in the server's JSON error format, not 500.
            fetcher.serve(nil)
            s.clock.advance(seconds: 11)
            let stranger = try await FakeRealm(kid: "rotated-key")
            let unavailable = try await create(try await stranger.token(roles: ["c19hotline"], now: s.clock.now), type: nil)
            XCTAssertEqual(unavailable.status, .serviceUnavailable, unavailable.body)
            XCTAssertEqual(unavailable.json["status"] as? Int, 503)
            XCTAssertNotNil(unavailable.headers[.retryAfter])
            let cached = try await create(try await realm.token(roles: ["c19hotline"], now: s.clock.now), type: nil)
            XCTAssertEqual(cached.status, .created, "the cached key still works")
        }
    }
}
