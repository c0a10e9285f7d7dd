import FluentKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import VerificationServer

/// The CWA v1 API of the standalone server, on SQLite and PostgreSQL.
final class VerificationServerTests: XCTestCase {
    func testTheWholeChainOnce() async throws {
        try await ServerUnderTest.run { s in
            let teleTAN = try await s.newTeleTAN()
            XCTAssertNotNil(TeleTAN(teleTAN), "a valid teleTAN with check character")

            let registration = try await s.registrationToken(teleTAN)
            XCTAssertEqual(registration.status, .created)
            let token = try XCTUnwrap(registration.json["registrationToken"] as? String)
            XCTAssertTrue(TeleTANLifecycle.isUUIDv4(token))
            let second = try await s.registrationToken(teleTAN)
            XCTAssertEqual(second.status, .badRequest, "one registration token per teleTAN")

            let tan = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(tan.status, .created)
            let tanValue = try XCTUnwrap(tan.json["tan"] as? String)
            let secondTAN = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(secondTAN.status, .badRequest, "one TAN per registration token")

            let result = try await s.post(s.app, "/version/v1/testresult", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(result.status, .ok)
            XCTAssertEqual(result.json["testResult"] as? Int, 2)
            XCTAssertEqual(Double(result.json["sc"] as? Int ?? 0), s.clock.now.timeIntervalSince1970, accuracy: 2)
            XCTAssertNotNil(result.json["responsePadding"])

            let verified = try await s.post(s.internal, "/version/v1/tan/verify", json: #"{"tan":"\#(tanValue)"}"#)
            XCTAssertEqual(verified.status, .ok)
            XCTAssertEqual(verified.headers[HTTPField.Name("X-CWA-TELETAN-TYPE")!], "TEST")
            let again = try await s.post(s.internal, "/version/v1/tan/verify", json: #"{"tan":"\#(tanValue)"}"#)
            XCTAssertEqual(again.status, .notFound)

            // Only keyed hashes at rest.
            let db = s.server.database.database(logger: TestDatabases.testLogger)
            let stored = try await TANRecord.query(on: db).all().map(\.hash) + RegistrationTokenRecord.query(on: db).all().map(\.hash)
            XCTAssertFalse(stored.contains(tanValue) || stored.contains(token))
            let audit = try await sql(db).raw("SELECT actor, details, address FROM audit_log WHERE action = 'teletan.create'").all()
            XCTAssertEqual(audit.count, 1)
            XCTAssertEqual(try audit.first?.decode(column: "actor", as: String.self), "officer-a")
            XCTAssertTrue(try audit.first?.decode(column: "details", as: String.self).contains(s.signer.keyID) ?? false, "which portal asked")
            XCTAssertNotEqual(try audit.first?.decode(column: "address", as: String?.self), "192.0.2.10",
                              "the internal listener ignores X-Forwarded-For, even with --trust-proxy")
        }
    }

    /// Issue 21, item 7: the server's secret rotated while it runs (`portal secret rotate
    /// --secret-file` on its file). A teleTAN and a registration token made before still redeem.
    func testATeleTANAndATokenMadeBeforeAKeyRotationStillRedeem() async throws {
        try await ServerUnderTest.run { s in
            let before = try await s.newTeleTAN()
            let early = try await s.newTeleTAN()
            let registration = try await s.registrationToken(early)
            let token = try XCTUnwrap(registration.json["registrationToken"] as? String)

            try KeyRotation.rotate(path: s.server.configuration.secretFile, now: s.clock.now, takeOverAfter: 0)
            s.clock.advance(seconds: 11)
            XCTAssertEqual(s.server.hasher.keyring.current().id, 2)

            let redeemed = try await s.registrationToken(before)
            XCTAssertEqual(redeemed.status, .created, "a teleTAN stored under key 1")
            let tan = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(tan.status, .created, "a registration token stored under key 1")
            let after = try await s.newTeleTAN()
            let redeemedAfter = try await s.registrationToken(after)
            XCTAssertEqual(redeemedAfter.status, .created)
        }
    }

    func testConcurrentRedemptionsGiveOneTokenAndOneTAN() async throws {
        try await ServerUnderTest.run { s in
            let teleTAN = try await s.newTeleTAN()
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let reply = try await s.registrationToken(teleTAN)
                        return (reply.status, reply.json["registrationToken"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0.0 == .created }.count, 1, "one teleTAN, one registration token")
            XCTAssertEqual(statuses.filter { $0.0 == .badRequest }.count, 7)
            let token = try XCTUnwrap(statuses.compactMap(\.1).first)
            let tans = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(tans.filter { $0 == .created }.count, 1, "one registration token, one TAN")
            let db = s.server.database.database(logger: TestDatabases.testLogger)
            let tokenRows = try await RegistrationTokenRecord.query(on: db).count()
            let tanRows = try await TANRecord.query(on: db).count()
            XCTAssertEqual(tokenRows, 1)
            XCTAssertEqual(tanRows, 1)
        }
    }

    func testUUIDv4CheckMatchesCWA() {
        XCTAssertTrue(TeleTANLifecycle.isUUIDv4("3f2504e0-4f89-41d3-9a0c-0305e82c3301"))
        XCTAssertTrue(TeleTANLifecycle.isUUIDv4("3f2504e0-4f89-41d3-Ba0c-0305e82c3301"), "variant may be upper case, as in CWA's pattern")
        for bad in ["3F2504E0-4F89-41D3-9A0C-0305E82C3301", "3f2504e0-4f89-31d3-9a0c-0305e82c3301", "3f2504e0-4f89-41d3-7a0c-0305e82c3301",
                    "3f2504e04f8941d39a0c0305e82c3301", "3f2504e0-4f89-41d3-9a0c-0305e82c330", "3f2504e0-4f89-41d3-9a0c-0305e82c33011",
                    "3f2504e0-4f89-41d3-9a0c-0305e82c330g", "3f2504e0-4f89-41d3-9a0c-0305e82c330é", ""] {
            XCTAssertFalse(TeleTANLifecycle.isUUIDv4(bad), bad)
        }
    }

    func testRefusedTeleTANs() async throws {
        try await ServerUnderTest.run { s in
            let teleTAN = try await s.newTeleTAN()
            let body = String(teleTAN.prefix(9))
            let wrongCheck = TeleTAN.alphabet.first { $0 != TeleTAN.checkCharacter(for: body) }!
            let badCheck = try await s.registrationToken(body + String(wrongCheck))
            XCTAssertEqual(badCheck.status, .badRequest)
            let value1 = try await s.registrationToken(teleTAN.lowercased())
            XCTAssertEqual(value1.status, .created, "still redeemable, case-insensitive")
            let value2 = try await s.registrationToken(teleTAN)
            XCTAssertEqual(value2.status, .badRequest, "redeemed")

            let expiring = try await s.newTeleTAN()
            s.clock.advance(seconds: 3601)
            let value3 = try await s.registrationToken(expiring)
            XCTAssertEqual(value3.status, .badRequest, "TEST teleTANs live one hour")
            let value4 = try await s.registrationToken("NOTATELETAN")
            XCTAssertEqual(value4.status, .badRequest)

            let guid = try await s.post(s.app, "/version/v1/registrationToken", json: #"{"key":"\#(String(repeating: "a", count: 64))","keyType":"GUID"}"#)
            XCTAssertEqual(guid.status, .badRequest)
            XCTAssertTrue(guid.body.contains("GUID"))
        }
    }

    func testEventTeleTANsNeedTheEventRoleAndLiveTwoDays() async throws {
        try await ServerUnderTest.run { s in
            let value5 = try await s.createTeleTAN(type: "EVENT", roles: ["c19hotline"])
            XCTAssertEqual(value5.status, .unauthorized, "a missing role is 401, as in CWA")
            let value6 = try await s.createTeleTAN(type: "TEST", roles: ["c19hotline_event"])
            XCTAssertEqual(value6.status, .unauthorized)
            let value7 = try await s.createTeleTAN(type: "BOGUS")
            XCTAssertEqual(value7.status, .badRequest)
            let event = try await s.createTeleTAN(type: "EVENT", roles: ["c19hotline_event"])
            XCTAssertEqual(event.status, .created)
            s.clock.advance(seconds: 47 * 3600)
            let registration = try await s.registrationToken(event.json["value"] as? String ?? "")
            XCTAssertEqual(registration.status, .created)
            let token = registration.json["registrationToken"] as? String ?? ""
            let tan = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#).json["tan"] as? String ?? ""
            let verified = try await s.post(s.internal, "/version/v1/tan/verify", json: #"{"tan":"\#(tan)"}"#)
            XCTAssertEqual(verified.status, .ok)
            XCTAssertEqual(verified.headers[HTTPField.Name("X-CWA-TELETAN-TYPE")!], "EVENT")
            // Two days and no longer.
            let late = try await s.createTeleTAN(type: "EVENT", roles: ["c19hotline_event"])
            s.clock.advance(seconds: 48 * 3600 + 60)
            let expired = try await s.registrationToken(late.json["value"] as? String ?? "")
            XCTAssertEqual(expired.status, .badRequest)
        }
    }

    func testPortalTokensAreChecked() async throws {
        try await ServerUnderTest.run { s in
            let none = try await s.post(s.internal, "/version/v1/tan/teletan")
            XCTAssertEqual(none.status, .unauthorized)
            let garbage = try await s.post(s.internal, "/version/v1/tan/teletan", headers: [.authorization: "Bearer not.a.jwt"])
            XCTAssertEqual(garbage.status, .unauthorized)
            let stranger = try PortalKeys.generate(into: s.directory.appendingPathComponent("stranger").path)
            let strangerSigner = try await PortalTokenSigner(privateKeyPath: stranger.privateKey)
            let untrusted = try await s.post(s.internal, "/version/v1/tan/teletan", headers: [
                .authorization: "Bearer \(try await strangerSigner.token(username: "x", roles: ["c19hotline"], now: s.clock.now))",
            ])
            XCTAssertEqual(untrusted.status, .unauthorized)
            let expired = try await s.signer.token(username: "x", roles: ["c19hotline"], now: s.clock.now.addingTimeInterval(-120))
            let old = try await s.post(s.internal, "/version/v1/tan/teletan", headers: [.authorization: "Bearer \(expired)"])
            XCTAssertEqual(old.status, .unauthorized)
            let rows = try await TeleTANRecord.query(on: s.server.database.database(logger: TestDatabases.testLogger)).count()
            XCTAssertEqual(rows, 0)
        }
    }

    func testGlobalLimit() async throws {
        try await ServerUnderTest.run(configure: { $0.teleTANsPerHour = 2 }) { s in
            _ = try await s.newTeleTAN()
            _ = try await s.newTeleTAN()
            let limited = try await s.createTeleTAN()
            XCTAssertEqual(limited.status, .tooManyRequests)
            XCTAssertNotNil(limited.headers[.retryAfter])
        }
    }

    func testBadInputGetsClearErrorsNever500() async throws {
        try await ServerUnderTest.run { s in
            let path = "/version/v1/registrationToken"
            let big = try await s.post(s.app, path, json: #"{"key":"\#(String(repeating: "A", count: 10_001))","keyType":"TELETAN"}"#)
            XCTAssertEqual(big.status, .notAcceptable)
            let chunked = try await s.post(s.app, path, json: #"{"key":"A","keyType":"TELETAN"}"#, headers: [.transferEncoding: "chunked"])
            XCTAssertEqual(chunked.status, .notAcceptable)
            let text = try await s.post(s.app, path, json: "key=A", headers: [.contentType: "text/plain"])
            XCTAssertEqual(text.status, .unsupportedMediaType)
            for malformed in ["{", "[]", #"{"key":1}"#, #"{"registrationToken":"x"}"#, "null"] {
                let reply = try await s.post(s.app, path, json: malformed)
                XCTAssertEqual(reply.status, .badRequest, malformed)
                XCTAssertEqual(reply.json["status"] as? Int, 400)
            }
            for endpoint in ["/version/v1/tan", "/version/v1/testresult"] {
                let value8 = try await s.post(s.app, endpoint, json: #"{"registrationToken":"not-a-uuid"}"#)
                XCTAssertEqual(value8.status, .badRequest)
                let unknown = UUID().uuidString.lowercased()
                let value9 = try await s.post(s.app, endpoint, json: #"{"registrationToken":"\#(unknown)"}"#)
                XCTAssertEqual(value9.status, .badRequest)
            }
            // Not a TAN at all: 400, as the API document and CWA say; a well-formed unknown one: 404.
            for malformed in [#"{"tan":"nope"}"#, #"{"tan":""}"#, #"{"tan":"\#(UUID().uuidString.lowercased().dropLast())x"}"#] {
                let value10 = try await s.post(s.internal, "/version/v1/tan/verify", json: malformed)
                XCTAssertEqual(value10.status, .badRequest, malformed)
            }
            let unknownTAN = try await s.post(s.internal, "/version/v1/tan/verify", json: #"{"tan":"\#(UUID().uuidString.lowercased())"}"#)
            XCTAssertEqual(unknownTAN.status, .notFound)
            // The internal endpoints do not exist on the app-facing listener.
            let value11 = try await s.post(s.app, "/version/v1/tan/teletan")
            XCTAssertEqual(value11.status, .notFound)
            let value12 = try await s.post(s.app, "/version/v1/tan/verify", json: #"{"tan":"x"}"#)
            XCTAssertEqual(value12.status, .notFound)
        }
    }

    func testWrongMethodGets405WithAllow() async throws {
        try await ServerUnderTest.run { s in
            let cases: [(any TestClientProtocol, HTTPRequest.Method, String, String)] = [
                (s.app, .get, "/version/v1/registrationToken", "POST"), (s.app, .put, "/version/v1/tan", "POST"),
                (s.app, .delete, "/health/ready", "GET, HEAD"), (s.internal, .get, "/version/v1/tan/teletan", "POST"),
                (s.internal, .head, "/version/v1/tan/verify", "POST"),
            ]
            for (client, method, path, allow) in cases {
                let reply = try await client.executeRequest(uri: path, method: method, headers: [:], body: nil)
                XCTAssertEqual(reply.status, .methodNotAllowed, "\(method) \(path)")
                XCTAssertEqual(reply.headers[.allow], allow, "\(method) \(path)")
                if method != .head {
                    XCTAssertEqual(reply.headers[.contentType], "application/json", "\(method) \(path)")
                    XCTAssertTrue(String(buffer: reply.body).contains("405"), "\(method) \(path)")
                }
            }
            let probe = try await s.app.executeRequest(uri: "/health/live", method: .head, headers: [:], body: nil)
            XCTAssertEqual(probe.status, .ok)
            let unknown = try await s.app.executeRequest(uri: "/version/v1/nothing", method: .get, headers: [:], body: nil)
            XCTAssertEqual(unknown.status, .notFound)
            // Metrics only on the internal listener: public counters would tell real requests from dummies.
            _ = try await s.newTeleTAN()
            let publicMetrics = try await s.app.executeRequest(uri: "/metrics", method: .get, headers: [:], body: nil)
            XCTAssertEqual(publicMetrics.status, .notFound)
            let internalMetrics = try await s.internal.executeRequest(uri: "/metrics", method: .get, headers: [:], body: nil)
            XCTAssertEqual(internalMetrics.status, .ok)
            XCTAssertTrue(String(buffer: internalMetrics.body).contains("verification_teletans_created_total"))
        }
    }

    func testFakeRequestsLookRealAndChangeNothing() async throws {
        try await ServerUnderTest.run { s in
            let teleTAN = try await s.newTeleTAN()
            let fake = try await s.registrationToken(teleTAN, fake: true)
            let real = try await s.registrationToken(teleTAN)
            XCTAssertEqual(fake.status, real.status)
            XCTAssertEqual(Set(fake.headers.map(\.name)), Set(real.headers.map(\.name)))
            XCTAssertEqual(fake.body.utf8.count, real.body.utf8.count)
            XCTAssertEqual(real.status, .created, "the fake did not redeem the teleTAN")

            let token = real.json["registrationToken"] as? String ?? ""
            let fakeHeaders: HTTPFields = [HTTPField.Name("cwa-fake")!: "1"]
            let fakeResult = try await s.post(s.app, "/version/v1/testresult", json: #"{"registrationToken":"\#(UUID().uuidString.lowercased())"}"#, headers: fakeHeaders)
            let realResult = try await s.post(s.app, "/version/v1/testresult", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(fakeResult.status, realResult.status)
            XCTAssertEqual(fakeResult.body.utf8.count, realResult.body.utf8.count)
            XCTAssertEqual(Set(fakeResult.headers.map(\.name)), Set(realResult.headers.map(\.name)))

            let fakeTAN = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#, headers: fakeHeaders)
            let realTAN = try await s.post(s.app, "/version/v1/tan", json: #"{"registrationToken":"\#(token)"}"#)
            XCTAssertEqual(realTAN.status, .created, "the fake did not use up the one TAN")
            XCTAssertEqual(fakeTAN.status, realTAN.status)
            XCTAssertEqual(fakeTAN.body.utf8.count, realTAN.body.utf8.count)
            XCTAssertEqual(realTAN.body.utf8.count, PaddedResponse.bodySize)
        }
    }

    func testGuessingIsSlowedThenRefusedPerAddress() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 2; $0.guessLockoutAfter = 4 }) { s in
            let teleTAN = try await s.newTeleTAN()
            for attempt in 0..<4 {
                let wrong = String(TeleTAN.random().value)
                let reply = try await s.registrationToken(wrong, address: "203.0.113.66")
                XCTAssertEqual(reply.status, .badRequest, "attempt \(attempt)")
            }
            let locked = try await s.registrationToken(teleTAN, address: "203.0.113.66")
            XCTAssertEqual(locked.status, .tooManyRequests)
            XCTAssertNotNil(locked.headers[.retryAfter])
            let other = try await s.registrationToken(teleTAN, address: "198.51.100.77")
            XCTAssertEqual(other.status, .created, "other addresses are not affected")
        }
    }

    /// An IPv6 client counts by its /64 (one host or line usually has a whole /64 and could
    /// otherwise take a fresh address, with a fresh count, for every guess); another /64 and
    /// IPv4 are not affected.
    func testGuessingFromOneIPv6Slash64IsCountedTogether() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 2; $0.guessLockoutAfter = 4 }) { s in
            let teleTAN = try await s.newTeleTAN()
            for attempt in 0..<4 {
                let wrong = String(TeleTAN.random().value)
                let reply = try await s.registrationToken(wrong, address: "2001:db8:5:6::\(attempt + 1)")
                XCTAssertEqual(reply.status, .badRequest, "attempt \(attempt)")
            }
            let locked = try await s.registrationToken(teleTAN, address: "2001:db8:5:6:ffff::42")
            XCTAssertEqual(locked.status, .tooManyRequests, "a fresh address of the same /64 is locked too")
            let other = try await s.registrationToken(teleTAN, address: "2001:db8:5:7::1")
            XCTAssertEqual(other.status, .created, "another /64 is not affected")
        }
    }

    func testConcurrentGuessesCannotExceedTheLimit() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 1000; $0.guessLockoutAfter = 10 }) { s in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<60 {
                    group.addTask { try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.90").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let lookedUp = statuses.filter { $0 == .badRequest }.count
            // (How many get through depends on how the counting interleaves; a burst may well be
            // refused entirely, which is the safe side.)
            XCTAssertEqual(statuses.filter { $0 != .badRequest && $0 != .tooManyRequests }, [], "only lookups and refusals")
            XCTAssertLessThanOrEqual(lookedUp, 10, "at most the limit of guesses reach the lookup: \(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .tooManyRequests }.count, 60 - lookedUp)
            // A valid teleTAN does not count as a failure: after nine failures it still works.
            let fresh = "203.0.113.91"
            for _ in 0..<9 { _ = try await s.registrationToken(TeleTAN.random().value, address: fresh) }
            let valid = try await s.registrationToken(try await s.newTeleTAN(), address: fresh)
            XCTAssertEqual(valid.status, .created)
            let tenth = try await s.registrationToken(TeleTAN.random().value, address: fresh)
            XCTAssertEqual(tenth.status, .badRequest, "the valid one gave its attempt back")
            let locked = try await s.registrationToken(TeleTAN.random().value, address: fresh)
            XCTAssertEqual(locked.status, .tooManyRequests)
        }
    }

    func testABurstOfValidRedemptionsFromOneAddressIsNeverLocked() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 1000; $0.guessLockoutAfter = 5 }) { s in
            var teleTANs: [String] = []
            for _ in 0..<30 { teleTANs.append(try await s.newTeleTAN()) }
            let nat = "203.0.113.93"  // many app users behind one carrier NAT address
            let replies = try await withThrowingTaskGroup(of: (String, ServerUnderTest.Reply).self) { group in
                for teleTAN in teleTANs {
                    group.addTask { (teleTAN, try await s.registrationToken(teleTAN, address: nat)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Some may be asked to retry in a second while lookups are under way; none fails, and
            // a retry as asked redeems the teleTAN.
            for (teleTAN, reply) in replies where reply.status != .created {
                XCTAssertEqual(reply.status, .tooManyRequests)
                XCTAssertEqual(reply.headers[.retryAfter], "1")
                let retried = try await s.registrationToken(teleTAN, address: nat)
                XCTAssertEqual(retried.status, .created)
            }
            let later = try await s.registrationToken(try await s.newTeleTAN(), address: nat)
            XCTAssertEqual(later.status, .created, "valid redemptions never lock an address")
        }
    }

    func testDummiesNeedOnlyWellFormedJSONAndAreRefusedLikeRealOnesWhenLocked() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 1000; $0.guessLockoutAfter = 2 }) { s in
            for path in ["/version/v1/registrationToken", "/version/v1/tan", "/version/v1/testresult"] {
                for body in ["{}", #"{"registrationToken":123}"#, "[]"] {
                    let reply = try await s.post(s.app, path, json: body, headers: [HTTPField.Name("cwa-fake")!: "1"])
                    XCTAssertTrue([.created, .ok].contains(reply.status), "\(path) \(body): \(reply.status)")
                }
                let malformed = try await s.post(s.app, path, json: "{", headers: [HTTPField.Name("cwa-fake")!: "1"])
                XCTAssertEqual(malformed.status, .badRequest)
            }
            for _ in 0..<2 { _ = try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.92") }
            let real = try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.92")
            let dummy = try await s.registrationToken(TeleTAN.random().value, fake: true, address: "203.0.113.92")
            XCTAssertEqual(real.status, .tooManyRequests)
            XCTAssertEqual(dummy.status, .tooManyRequests, "a dummy from a locked address looks like a real request")
        }
    }

    func testRetentionDeletesOldRowsUnderALock() async throws {
        try await ServerUnderTest.run { s in
            let teleTAN = try await s.newTeleTAN()
            _ = try await s.registrationToken(teleTAN)
            let db = s.server.database.database(logger: TestDatabases.testLogger)
            s.clock.advance(seconds: 20 * 86400)
            let value13 = try await s.server.lifecycle.purgeExpired(on: db)
            XCTAssertTrue(value13)
            let value14 = try await TeleTANRecord.query(on: db).count()
            XCTAssertEqual(value14, 1)
            s.clock.advance(seconds: 2 * 86400)
            let value15 = try await s.server.lifecycle.purgeExpired(on: db)
            XCTAssertTrue(value15)
            let value16 = try await TeleTANRecord.query(on: db).count()
            XCTAssertEqual(value16, 0)
            let value17 = try await RegistrationTokenRecord.query(on: db).count()
            XCTAssertEqual(value17, 0)
        }
    }
}
