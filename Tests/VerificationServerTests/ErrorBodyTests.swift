import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TeleTAN
import TestSupport
import XCTest
@testable import VerificationServer

/// What error bodies give away (issue 28): on the app-facing listener an error is as long as a
/// success or a dummy's answer, and a bad body on either listener is answered with a fixed text,
/// not the JSON decoder's description of it.
final class ErrorBodyTests: XCTestCase {
    func testAppErrorsAreAsLongAsDummies() async throws {
        try await ServerUnderTest.run(configure: { $0.guessSlowdownAfter = 1000; $0.guessLockoutAfter = 2 }) { s in
            let dummy = try await s.registrationToken(TeleTAN.random().value, fake: true)
            XCTAssertEqual(dummy.status, .created)
            var errors: [(String, ServerUnderTest.Reply)] = []
            errors.append(("400 unknown teleTAN", try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.20")))
            errors.append(("400 GUID", try await s.post(s.app, "/version/v1/registrationToken", json: #"{"key":"x","keyType":"GUID"}"#)))
            errors.append(("400 malformed", try await s.post(s.app, "/version/v1/tan", json: "{")))
            errors.append(("400 unknown token", try await s.post(s.app, "/version/v1/testresult", json: #"{"registrationToken":"\#(UUID().uuidString.lowercased())"}"#)))
            errors.append(("404", try await s.post(s.app, "/version/v1/nothing", json: "{}")))
            errors.append(("405", try await s.post(s.app, "/health/live", json: "{}")))
            errors.append(("415", try await s.post(s.app, "/version/v1/tan", json: "x", headers: [.contentType: "text/plain"])))
            _ = try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.20")
            errors.append(("429", try await s.registrationToken(TeleTAN.random().value, address: "203.0.113.20")))
            XCTAssertEqual(errors.map { $0.1.status.code }, [400, 400, 400, 400, 404, 405, 415, 429])
            for (name, reply) in errors {
                XCTAssertEqual(reply.body.utf8.count, dummy.body.utf8.count, "\(name): \(reply.body)")
                XCTAssertEqual(reply.json["status"] as? Int, reply.status.code, name)
                XCTAssertNotNil(reply.json["error"] as? String, name)
                XCTAssertEqual(reply.headers[.contentType], "application/json", name)
            }
            let paddings = Set(errors.compactMap { $0.1.json["responsePadding"] as? String })
            XCTAssertEqual(paddings.count, errors.count, "random padding, as in a success body")
        }
    }

    func testBadBodiesGetAFixedMessageNotTheDecodersText() async throws {
        try await ServerUnderTest.run { s in
            let token = try await s.signer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now)
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            let cases: [(any TestClientProtocol, String, String?)] = [
                (s.internal, "/version/v1/tan/teletan/status", "{}"), (s.internal, "/version/v1/tan/teletan/status", #"{"references":1}"#),
                (s.internal, "/version/v1/tan/teletan/status", #"{"references":[null]}"#), (s.internal, "/version/v1/tan/teletan/status", "{"),
                (s.internal, "/version/v1/tan/teletan/status", nil), (s.internal, "/version/v1/tan/teletan/revoke", #"{"reference":1}"#),
                (s.internal, "/version/v1/tan/verify", #"{"tan":5}"#), (s.internal, "/version/v1/tan/verify", "[]"),
                (s.app, "/version/v1/registrationToken", #"{"key":"x"}"#), (s.app, "/version/v1/tan", #"{"registrationToken":true}"#),
            ]
            for (client, path, body) in cases {
                let reply = try await s.post(client, path, json: body, headers: auth)
                XCTAssertEqual(reply.status, .badRequest, "\(path) \(body ?? "-")")
                XCTAssertEqual(reply.json["error"] as? String, CWARequestMiddleware.malformedBody, "\(path) \(body ?? "-"): \(reply.body)")
                for wording in ["Coding key", "Type mismatch", "not valid input", "Value not found", "references", "Swift"] {
                    XCTAssertFalse(reply.body.contains(wording), "\(path) \(body ?? "-"): \(reply.body)")
                }
            }
        }
    }
}
