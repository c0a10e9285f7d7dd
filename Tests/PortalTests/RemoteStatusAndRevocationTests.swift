import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FluentKit
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceAuth
import Storage
import TeleTAN
import TestSupport
import Verification
import VerificationClient
import VerificationServer
import XCTest

/// `RemoteVerificationService`'s reference, status and revocation: against a real verification
/// server, against a server without those endpoints (a plain CWA one), and against one that
/// answers oddly or not at all.
final class RemoteStatusAndRevocationTests: XCTestCase {
    static let alice = Issuer(username: "officer-a", roles: ["c19hotline"])

    func testReferenceStatusAndRevocationAgainstTheStandaloneServer() async throws {
        try await LiveVerificationServer.run { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)/", signer: server.signer)
            try await Self.using(remote) { db in
                func issue() async throws -> IssuedTeleTAN {
                    try await remote.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "officer-a", roles: ["c19hotline"]), within: db)
                }
                let first = try await issue()
                let second = try await issue()
                let reference = try XCTUnwrap(first.reference)
                let rows = try await TeleTANRecord.query(on: server.app.database.database(logger: TestDatabases.testLogger)).all()
                XCTAssertEqual(Set(rows.compactMap { $0.id?.uuidString.lowercased() }), [reference, try XCTUnwrap(second.reference)],
                               "the reference is the server's row id")

                let unknown = UUID().uuidString.lowercased()
                let before = await remote.statuses(of: [reference, second.reference!, unknown], issuer: Self.alice, within: db)
                XCTAssertEqual(before, [reference: .unused, second.reference!: .unused])
                let bob = Issuer(username: "officer-b", roles: ["c19hotline"])
                let bobsView = await remote.statuses(of: [reference], issuer: bob, within: db)
                XCTAssertEqual(bobsView, [:], "someone else's teleTAN is left out")
                let bobsRevocation = try await remote.revoke(reference: reference, issuer: bob, within: db)
                XCTAssertEqual(bobsRevocation, .notFound)

                let revoked = try await remote.revoke(reference: reference, issuer: Self.alice, within: db)
                XCTAssertEqual(revoked, .revoked)
                let again = try await remote.revoke(reference: reference, issuer: Self.alice, within: db)
                XCTAssertEqual(again, .alreadyRevoked)
                let after = await remote.statuses(of: [reference, second.reference!], issuer: Self.alice, within: db)
                XCTAssertEqual(after, [reference: .revoked, second.reference!: .unused])

                // The app: the revoked teleTAN fails, the other one still works.
                try await Application(router: server.app.makeAppRouter()).test(.router) { app in
                    func redeem(_ teleTAN: TeleTAN) async throws -> HTTPResponse.Status {
                        try await app.executeRequest(
                            uri: "/version/v1/registrationToken", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: #"{"key":"\#(teleTAN.value)","keyType":"TELETAN"}"#)).status
                    }
                    let revokedRedemption = try await redeem(first.teleTAN)
                    XCTAssertEqual(revokedRedemption, .badRequest)
                    let otherRedemption = try await redeem(second.teleTAN)
                    XCTAssertEqual(otherRedemption, .created)
                }
                let late = try await remote.revoke(reference: second.reference!, issuer: Self.alice, within: db)
                XCTAssertEqual(late, .alreadyRedeemed)
                let redeemed = await remote.statuses(of: [second.reference!], issuer: Self.alice, within: db)
                XCTAssertEqual(redeemed, [second.reference!: .redeemed])

                // A token the server refuses (no CWA role): status unknown, revocation unavailable.
                let roleless = Issuer(username: "officer-a", roles: [])
                let refused = await remote.statuses(of: [reference], issuer: roleless, within: db)
                XCTAssertNil(refused)
                do {
                    _ = try await remote.revoke(reference: second.reference!, issuer: roleless, within: db)
                    XCTFail("a refusal (401) is no answer")
                } catch VerificationServiceError.unavailable {}
                // More references than one request takes are asked in batches.
                let many = (0..<250).map { _ in UUID().uuidString.lowercased() } + [reference]
                let batched = await remote.statuses(of: many, issuer: Self.alice, within: db)
                XCTAssertEqual(batched, [reference: .revoked])
                let malformed = await remote.statuses(of: ["not-a-uuid"], issuer: Self.alice, within: db)
                XCTAssertEqual(malformed, [:])
            }
        }
    }

    func testAServerWithoutTheEndpointsGivesNoReferenceAndNoStatus() async throws {
        // A plain CWA server: `/tan/teletan` without the reference header, nothing else.
        let router = Router()
        router.post("/version/v1/tan/teletan") { _, _ in Self.created(reference: nil) }
        try await Self.serve(router) { port in
            let remote = try await Self.remote(port: port)
            try await Self.using(remote) { db in
                let issued = try await remote.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "officer-a", roles: ["c19hotline"]), within: db)
                XCTAssertNil(issued.reference)
                let statuses = await remote.statuses(of: [UUID().uuidString.lowercased()], issuer: Self.alice, within: db)
                XCTAssertNil(statuses, "the route is missing: the status is unknown")
            }
        }
    }

    func testOddAnswersAreNotBelieved() async throws {
        let known = UUID().uuidString.lowercased(), frozen = UUID().uuidString.lowercased(), unrequested = UUID().uuidString.lowercased()
        let garbled = "00000000-0000-4000-8000-000000000000"
        let router = Router()
        router.post("/version/v1/tan/teletan") { _, _ in Self.created(reference: "not-a-uuid") }
        router.post("/version/v1/tan/teletan/status") { request, context -> Response in
            struct Body: Decodable { let references: [String] }
            let body = try await request.decode(as: Body.self, context: context)
            let json = body.references.contains(garbled)
                ? #"{"statuses": ["unused"]}"#
                : #"{"statuses": {"\#(known)": "unused", "\#(frozen)": "frozen", "\#(unrequested)": "redeemed"}}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        router.post("/version/v1/tan/teletan/revoke") { request, context -> Response in
            struct Body: Decodable { let reference: String }
            let body = try await request.decode(as: Body.self, context: context)
            let json = body.reference == known ? #"{"result": "vanished"}"# : #"{"status": 500}"#
            return Response(status: body.reference == known ? .ok : .internalServerError, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        try await Self.serve(router) { port in
            let remote = try await Self.remote(port: port)
            try await Self.using(remote) { db in
                let issued = try await remote.issueTeleTAN(TeleTANRequest(type: .test, requestedBy: "officer-a", roles: ["c19hotline"]), within: db)
                XCTAssertNotNil(TeleTAN(issued.teleTAN.value), "the teleTAN itself is fine")
                XCTAssertNil(issued.reference, "a reference that is no UUID is dropped")

                let other = UUID().uuidString.lowercased()
                let statuses = await remote.statuses(of: [known, frozen, other], issuer: Self.alice, within: db)
                XCTAssertEqual(statuses, [known: .unused], "unknown status strings and unrequested references are dropped")
                let garbage = await remote.statuses(of: [garbled], issuer: Self.alice, within: db)
                XCTAssertNil(garbage, "a malformed answer means unknown")

                for reference in [known, other] {
                    do {
                        _ = try await remote.revoke(reference: reference, issuer: Self.alice, within: db)
                        XCTFail("neither an unknown result nor a 500 is an answer")
                    } catch VerificationServiceError.unavailable {}
                }
            }
        }
    }

    func testAServerThatNeverAnswersTimesOut() async throws {
        // A listening socket nobody accepts from: the connection is made, no answer ever comes.
        let (listener, port) = try RemoteVerificationTests.boundSocket()
        defer { close(listener) }
        XCTAssertEqual(listen(listener, 16), 0)
        let remote = try await Self.remote(port: port, timeout: .seconds(1))
        try await Self.using(remote) { db in
            let start = ContinuousClock.now
            let statuses = await remote.statuses(of: [UUID().uuidString.lowercased()], issuer: Self.alice, within: db)
            XCTAssertNil(statuses)
            do {
                _ = try await remote.revoke(reference: UUID().uuidString.lowercased(), issuer: Self.alice, within: db)
                XCTFail("no answer is no answer")
            } catch VerificationServiceError.unavailable {}
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(8), "each gave up after the timeout (1 s)")
        }

        // And one that refuses connections.
        let (closed, closedPort) = try RemoteVerificationTests.boundSocket()
        defer { close(closed) }
        let refused = try await Self.remote(port: closedPort, timeout: .seconds(2))
        try await Self.using(refused) { db in
            let statuses = await refused.statuses(of: [UUID().uuidString.lowercased()], issuer: Self.alice, within: db)
            XCTAssertNil(statuses)
            do {
                _ = try await refused.revoke(reference: UUID().uuidString.lowercased(), issuer: Self.alice, within: db)
                XCTFail("unreachable")
            } catch VerificationServiceError.unavailable {}
        }
    }

    // MARK: helpers

    /// A 201 as `/tan/teletan` gives it, with `reference` in the header when given.
    private static func created(reference: String?) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let reference { headers[HTTPField.Name("X-CWA-TELETAN-REFERENCE")!] = reference }
        let body = #"{"value":"\#(TeleTAN.random().value)"}"#
        return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private static func serve(_ router: Router<BasicRequestContext>, _ body: @Sendable @escaping (Int) async throws -> Void) async throws {
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            .test(.live) { client in try await body(client.port!) }
    }

    private static func remote(port: Int, timeout: Duration = .seconds(5)) async throws -> RemoteVerificationService {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        let keys = try PortalKeys.generate(into: directory.path)
        let signer = try await PortalTokenSigner(privateKeyPath: keys.privateKey)
        return RemoteVerificationService(baseURL: "http://127.0.0.1:\(port)", signer: signer, timeout: timeout)
    }

    /// Runs `body` with a database to pass (the remote service ignores it; the protocol still
    /// wants one), then shuts `remote` down, also when `body` throws.
    private static func using(_ remote: RemoteVerificationService, _ body: (any Database) async throws -> Void) async throws {
        do {
            try await withUnusedDatabase(body)
        } catch {
            await remote.shutdown()
            throw error
        }
        await remote.shutdown()
    }

    private static func withUnusedDatabase(_ body: (any Database) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unused-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = try PortalDatabase(location: .sqlite(path: directory.appendingPathComponent("unused.sqlite").path),
                                          logger: TestDatabases.testLogger)
        do {
            try await body(database.database(logger: TestDatabases.testLogger))
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }
}
