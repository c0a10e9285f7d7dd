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

/// The internal endpoints for a teleTAN's issuer: its reference at creation, its status, its
/// revocation. On SQLite and PostgreSQL.
final class StatusAndRevocationTests: XCTestCase {
    static let referenceHeader = HTTPField.Name("X-CWA-TELETAN-REFERENCE")!

    func testCreationNamesTheRowAsReference() async throws {
        try await ServerUnderTest.run { s in
            let reply = try await s.create(as: "officer-a")
            XCTAssertEqual(reply.status, .created)
            XCTAssertEqual(Array(reply.json.keys), ["value"], "the body stays CWA's")
            let reference = try XCTUnwrap(reply.headers[Self.referenceHeader])
            XCTAssertEqual(reference, reference.lowercased())
            let db = s.server.database.database(logger: TestDatabases.testLogger)
            let rows = try await TeleTANRecord.query(on: db).all()
            XCTAssertEqual(rows.map { $0.id?.uuidString.lowercased() }, [reference], "the reference is the row id")
            let other = try await s.create(as: "officer-a")
            XCTAssertNotEqual(other.headers[Self.referenceHeader], reference)
            // The creation's audit entry names the reference, so a revocation can be traced to it.
            let details = try await sql(db).raw("SELECT details FROM audit_log WHERE action = 'teletan.create' ORDER BY seq").all()
                .map { try $0.decode(column: "details", as: String.self) }
            XCTAssertTrue(details.first?.contains(reference) ?? false, details.first ?? "")
        }
    }

    func testStatusOfEachKindAndOnlyTheIssuersOwn() async throws {
        try await ServerUnderTest.run { s in
            let expired = try await s.create(as: "officer-a")
            s.clock.advance(seconds: 3601)  // TEST teleTANs live one hour
            let redeemed = try await s.create(as: "officer-a")
            let revoked = try await s.create(as: "officer-a")
            let unused = try await s.create(as: "officer-a")
            let event = try await s.create(as: "officer-a", type: "EVENT", roles: ["c19hotline_event"])
            let someoneElses = try await s.create(as: "officer-b")
            let redemption = try await s.registrationToken(redeemed.teleTAN)
            XCTAssertEqual(redemption.status, .created)
            let revocation = try await s.revoke(revoked.reference, as: "officer-a")
            XCTAssertEqual(revocation.json["result"] as? String, "revoked")

            let unknown = UUID().uuidString.lowercased()
            let all = [expired, redeemed, revoked, unused, event, someoneElses].map(\.reference) + [unknown]
            let reply = try await s.status(all, as: "officer-a")
            XCTAssertEqual(reply.status, .ok)
            XCTAssertEqual(reply.headers[.contentType], "application/json")
            XCTAssertEqual(reply.json["statuses"] as? [String: String], [
                expired.reference: "expired", redeemed.reference: "redeemed", revoked.reference: "revoked",
                unused.reference: "unused", event.reference: "unused",
            ], "someone else's and unknown references are left out alike")

            let theirs = try await s.status(all, as: "officer-b")
            XCTAssertEqual(theirs.json["statuses"] as? [String: String], [someoneElses.reference: "unused"])
            let none = try await s.status([unknown], as: "officer-a")
            XCTAssertEqual(none.status, .ok)
            XCTAssertEqual(none.body, #"{"statuses":{}}"#)
            // An event-only officer may ask too; upper-case references are the same references.
            let upper = try await s.status([unused.reference.uppercased()], as: "officer-a", roles: ["c19hotline_event"])
            XCTAssertEqual(upper.json["statuses"] as? [String: String], [unused.reference: "unused"])
        }
    }

    func testARevokedTeleTANRedeemsLikeAnUnknownOne() async throws {
        try await ServerUnderTest.run { s in
            let issued = try await s.create(as: "officer-a")
            let revoked = try await s.revoke(issued.reference, as: "officer-a")
            XCTAssertEqual(revoked.status, .ok)
            XCTAssertEqual(revoked.body, #"{"result":"revoked"}"#)

            let redemption = try await s.registrationToken(issued.teleTAN)
            XCTAssertEqual(redemption.status, .badRequest)
            let body = String(issued.teleTAN.prefix(9))
            let unknownTeleTAN = body == "222222222" ? "333333333" : "222222222"
            let unknown = try await s.registrationToken(unknownTeleTAN + String(TeleTAN.checkCharacter(for: unknownTeleTAN)))
            XCTAssertEqual(unknown.status, .badRequest)
            // The same answer but for the random padding.
            XCTAssertEqual(redemption.json["error"] as? String, unknown.json["error"] as? String, "no hint that it was revoked")
            XCTAssertEqual(Set(redemption.json.keys), Set(unknown.json.keys))
            XCTAssertEqual(redemption.body.utf8.count, unknown.body.utf8.count)

            let again = try await s.revoke(issued.reference, as: "officer-a")
            XCTAssertEqual(again.json["result"] as? String, "already_revoked")

            // Every attempt is audited: who, which reference, what came of it; never the teleTAN.
            let db = s.server.database.database(logger: TestDatabases.testLogger)
            let rows = try await sql(db).raw(
                "SELECT actor, outcome, subject, details FROM audit_log WHERE action = 'teletan.revoke' ORDER BY seq").all()
            XCTAssertEqual(try rows.map { try $0.decode(column: "actor", as: String.self) }, ["officer-a", "officer-a"])
            XCTAssertEqual(try rows.map { try $0.decode(column: "outcome", as: String.self) }, ["success", "refused"])
            XCTAssertEqual(try rows.map { try $0.decode(column: "subject", as: String?.self) }, [nil, nil])
            let details = try rows.map { try $0.decode(column: "details", as: String.self) }
            XCTAssertTrue(details.allSatisfy { $0.contains(issued.reference) && $0.contains(s.signer.keyID) }, "\(details)")
            XCTAssertTrue(details.last?.contains("already_revoked") ?? false, "\(details)")
            let everything = try await sql(db).raw("SELECT details FROM audit_log").all()
                .map { try $0.decode(column: "details", as: String.self) }.joined()
            XCTAssertFalse(everything.contains(issued.teleTAN))
        }
    }

    func testTooLateToRevoke() async throws {
        try await ServerUnderTest.run { s in
            let redeemed = try await s.create(as: "officer-a")
            let redemption = try await s.registrationToken(redeemed.teleTAN)
            XCTAssertEqual(redemption.status, .created)
            let late = try await s.revoke(redeemed.reference, as: "officer-a")
            XCTAssertEqual(late.status, .ok)
            XCTAssertEqual(late.json["result"] as? String, "already_redeemed")

            let expiring = try await s.create(as: "officer-a")
            s.clock.advance(seconds: 3601)
            let expired = try await s.revoke(expiring.reference, as: "officer-a")
            XCTAssertEqual(expired.json["result"] as? String, "expired")
            let statuses = try await s.status([redeemed.reference, expiring.reference], as: "officer-a")
            XCTAssertEqual(statuses.json["statuses"] as? [String: String],
                           [redeemed.reference: "redeemed", expiring.reference: "expired"], "neither became revoked")
        }
    }

    func testSomeoneElsesTeleTANCannotBeRevoked() async throws {
        try await ServerUnderTest.run { s in
            let issued = try await s.create(as: "officer-a")
            let foreign = try await s.revoke(issued.reference, as: "officer-b")
            XCTAssertEqual(foreign.status, .notFound)
            XCTAssertEqual(foreign.json["status"] as? Int, 404)
            XCTAssertNotNil(foreign.json["error"] as? String)
            let unknown = try await s.revoke(UUID().uuidString.lowercased(), as: "officer-b")
            XCTAssertEqual(unknown.status, .notFound)
            XCTAssertEqual(unknown.body, foreign.body, "unknown and someone else's look the same")
            let redemption = try await s.registrationToken(issued.teleTAN)
            XCTAssertEqual(redemption.status, .created, "still redeemable")

            let db = s.server.database.database(logger: TestDatabases.testLogger)
            let rows = try await sql(db).raw(
                "SELECT actor, outcome, details FROM audit_log WHERE action = 'teletan.revoke' ORDER BY seq").all()
            XCTAssertEqual(try rows.map { try $0.decode(column: "actor", as: String.self) }, ["officer-b", "officer-b"])
            XCTAssertEqual(try rows.map { try $0.decode(column: "outcome", as: String.self) }, ["refused", "refused"])
            XCTAssertTrue(try rows.first?.decode(column: "details", as: String.self).contains("not_found") ?? false)
        }
    }

    func testTokensRolesAndMalformedBodies() async throws {
        try await ServerUnderTest.run { s in
            let issued = try await s.create(as: "officer-a")
            let statusPath = "/version/v1/tan/teletan/status", revokePath = "/version/v1/tan/teletan/revoke"
            let statusBody = #"{"references":["\#(issued.reference)"]}"#, revokeBody = #"{"reference":"\#(issued.reference)"}"#
            for (path, body) in [(statusPath, statusBody), (revokePath, revokeBody)] {
                let none = try await s.post(s.internal, path, json: body)
                XCTAssertEqual(none.status, .unauthorized, path)
                XCTAssertEqual(none.json["status"] as? Int, 401, path)
                let garbage = try await s.post(s.internal, path, json: body, headers: [.authorization: "Bearer not.a.jwt"])
                XCTAssertEqual(garbage.status, .unauthorized, path)
                for roles in [[], ["c19hotline_admin"]] {
                    let token = try await s.signer.token(username: "officer-a", roles: roles, now: s.clock.now)
                    // A missing role is 401, as CWA answers it (never 403).
                    let refused = try await s.post(s.internal, path, json: body, headers: [.authorization: "Bearer \(token)"])
                    XCTAssertEqual(refused.status, .unauthorized, "\(path) \(roles)")
                    XCTAssertEqual(refused.json["status"] as? Int, 401, path)
                }
            }
            let refusedRevocations = try await sql(s.server.database.database(logger: TestDatabases.testLogger))
                .raw("SELECT details FROM audit_log WHERE action = 'teletan.revoke' AND outcome = 'refused'").all()
            XCTAssertEqual(refusedRevocations.count, 2, "a revocation refused for its role is audited")

            let token = try await s.signer.token(username: "officer-a", roles: ["c19hotline"], now: s.clock.now)
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            let tooMany = (0...100).map { _ in #""\#(UUID().uuidString.lowercased())""# }.joined(separator: ",")
            let enough = (0..<99).map { _ in #""\#(UUID().uuidString.lowercased())""# }.joined(separator: ",")
            let badStatus = [
                #"{"references":[]}"#, #"{"references":[\#(tooMany)]}"#, #"{"references":["not-a-uuid"]}"#,
                #"{"references":["\#(issued.reference)","\#(issued.reference)x"]}"#, #"{"references":["\#(issued.reference.replacingOccurrences(of: "-", with: ""))"]}"#,
                #"{"references":[1]}"#, #"{"references":"\#(issued.reference)"}"#, #"{"reference":"\#(issued.reference)"}"#,
                "{", "[]", "null",
            ]
            for body in badStatus {
                let reply = try await s.post(s.internal, statusPath, json: body, headers: auth)
                XCTAssertEqual(reply.status, .badRequest, body)
                XCTAssertEqual(reply.json["status"] as? Int, 400, body)
                XCTAssertNotNil(reply.json["error"] as? String, body)
            }
            let empty = try await s.post(s.internal, statusPath, headers: auth)
            XCTAssertEqual(empty.status, .badRequest, "no body")
            let hundred = try await s.post(s.internal, statusPath, json: #"{"references":["\#(issued.reference)",\#(enough)]}"#, headers: auth)
            XCTAssertEqual(hundred.status, .ok, "100 references are allowed")
            XCTAssertEqual(hundred.json["statuses"] as? [String: String], [issued.reference: "unused"])

            for body in [#"{"reference":"not-a-uuid"}"#, #"{"reference":""}"#, #"{"reference":1}"#, #"{"references":["\#(issued.reference)"]}"#, "{", "null"] {
                let reply = try await s.post(s.internal, revokePath, json: body, headers: auth)
                XCTAssertEqual(reply.status, .badRequest, body)
                XCTAssertEqual(reply.json["status"] as? Int, 400, body)
            }
            let text = try await s.post(s.internal, revokePath, json: "reference=x", headers: auth.merging([.contentType: "text/plain"]))
            XCTAssertEqual(text.status, .unsupportedMediaType)
            let big = try await s.post(s.internal, statusPath, json: #"{"references":["\#(String(repeating: "a", count: 10_001))"]}"#, headers: auth)
            XCTAssertEqual(big.status, .notAcceptable)
            let after = try await s.status([issued.reference], as: "officer-a")
            XCTAssertEqual(after.json["statuses"] as? [String: String], [issued.reference: "unused"], "nothing above changed it")

            for path in [statusPath, revokePath] {
                let reply = try await s.internal.executeRequest(uri: path, method: .get, headers: [:], body: nil)
                XCTAssertEqual(reply.status, .methodNotAllowed, path)
                XCTAssertEqual(reply.headers[.allow], "POST", path)
                let app = try await s.post(s.app, path, json: statusBody)
                XCTAssertEqual(app.status, .notFound, "not on the app-facing listener: \(path)")
            }
        }
    }
}

extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var all = self
        for field in other { all[field.name] = field.value }
        return all
    }
}

extension ServerUnderTest {
    struct Created {
        let teleTAN: String
        let reference: String
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let json: [String: Any]
    }

    fileprivate func create(as username: String, type: String = "TEST", roles: [String] = ["c19hotline"]) async throws -> Created {
        let token = try await signer.token(username: username, roles: roles, now: clock.now)
        let reply = try await post(`internal`, "/version/v1/tan/teletan", headers: [
            .authorization: "Bearer \(token)", HTTPField.Name("X-CWA-TELETAN-TYPE")!: type,
        ])
        XCTAssertEqual(reply.status, .created)
        return Created(teleTAN: reply.json["value"] as? String ?? "",
                       reference: reply.headers[StatusAndRevocationTests.referenceHeader] ?? "",
                       status: reply.status, headers: reply.headers, json: reply.json)
    }

    fileprivate func status(_ references: [String], as username: String, roles: [String] = ["c19hotline"]) async throws -> Reply {
        let token = try await signer.token(username: username, roles: roles, now: clock.now)
        let body = String(decoding: try JSONEncoder().encode(["references": references]), as: UTF8.self)
        return try await post(`internal`, "/version/v1/tan/teletan/status", json: body, headers: [.authorization: "Bearer \(token)"])
    }

    fileprivate func revoke(_ reference: String, as username: String, roles: [String] = ["c19hotline"]) async throws -> Reply {
        let token = try await signer.token(username: username, roles: roles, now: clock.now)
        return try await post(`internal`, "/version/v1/tan/teletan/revoke", json: #"{"reference":"\#(reference)"}"#,
                              headers: [.authorization: "Bearer \(token)"])
    }
}
