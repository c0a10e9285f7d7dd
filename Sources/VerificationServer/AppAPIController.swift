import FluentKit
import Foundation
import Hummingbird
import HTTPTypes
import Storage
import TeleTAN
import Verification

/// The app-facing CWA API: `/registrationToken`, `/tan`, `/testresult`.
///
/// Dummy requests (`cwa-fake: 1`) need only a well-formed JSON body. They do work of the same kind
/// and amount as a real request (the guessing check and its delay, keyed hashing, indexed reads,
/// committed writes to a counter nobody reads), so they take about as long; they change nothing
/// a real request sees and get a response of the same status, headers and size.
struct AppAPIController: Sendable {
    let database: PortalDatabase
    let lifecycle: TeleTANLifecycle
    let guessing: GuessingProtection
    let hasher: KeyedHasher
    let metrics: ServerMetrics

    static let fakeHeader = HTTPField.Name("cwa-fake")!

    func addRoutes(to router: Router<ServerRequestContext>) {
        let v1 = router.group("version/v1")
        v1.post("registrationToken", use: registrationToken)
        v1.post("tan", use: tan)
        v1.post("testresult", use: testResult)
    }

    struct RegistrationTokenRequest: Decodable {
        let key: String
        let keyType: String
    }

    struct TokenRequest: Decodable {
        let registrationToken: String
    }

    @Sendable func registrationToken(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let db = database.database(logger: context.logger)
        let address = context.guessingKey
        if isFake(request) {
            _ = try await request.decodeBody(as: WellFormedJSON.self, context: context)
            // Real: the lock check (+ delay), then one write that redeems.
            try await guessing.checkAndDelay(address: address, on: db)
            try await fakeWrite(on: db)
            return PaddedResponse.registrationToken(UUID().uuidString.lowercased())
        }
        let body = try await request.decodeBody(as: RegistrationTokenRequest.self, context: context)
        switch body.keyType {
        case "TELETAN": break
        case "GUID": throw HTTPError(.badRequest, message: "keyType GUID is not supported by this server (teleTAN only)")
        default: throw HTTPError(.badRequest, message: "keyType must be TELETAN")
        }
        try await guessing.admit(address: address, on: db)
        let token: String
        do {
            token = try await lifecycle.registrationToken(for: body.key, on: db)
        } catch TeleTANLifecycle.Refusal.invalidTeleTAN {
            metrics.count("verification_invalid_teletans_total")
            try await guessing.recordFailure(address: address, on: db)
            throw HTTPError(.badRequest, message: "invalid, unknown, expired or already redeemed teleTAN")
        } catch {
            // No verdict on the teleTAN (the database failed): the attempt does not count.
            guessing.endLookup(address: address)
            throw error
        }
        guessing.endLookup(address: address)
        metrics.count("verification_registration_tokens_total")
        return PaddedResponse.registrationToken(token)
    }

    @Sendable func tan(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let db = database.database(logger: context.logger)
        if isFake(request) {
            _ = try await request.decodeBody(as: WellFormedJSON.self, context: context)
            try await fakeWrite(on: db)  // real: one write
            return PaddedResponse.tan(UUID().uuidString.lowercased())
        }
        let body = try await request.decodeBody(as: TokenRequest.self, context: context)
        do {
            return PaddedResponse.tan(try await lifecycle.tan(for: body.registrationToken, on: db))
        } catch TeleTANLifecycle.Refusal.tanAlreadyIssued {
            throw HTTPError(.badRequest, message: "a TAN was already issued for this registration token")
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.badRequest, message: "unknown registration token")
        }
    }

    @Sendable func testResult(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let db = database.database(logger: context.logger)
        if isFake(request) {
            _ = try await request.decodeBody(as: WellFormedJSON.self, context: context)
            try await fakeRead(on: db)  // real: one read
            return PaddedResponse.testResult(sessionCreated: Date())
        }
        let body = try await request.decodeBody(as: TokenRequest.self, context: context)
        do {
            return PaddedResponse.testResult(sessionCreated: try await lifecycle.sessionCreation(of: body.registrationToken, on: db))
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.badRequest, message: "unknown registration token")
        }
    }

    private func isFake(_ request: Request) -> Bool {
        request.headers[Self.fakeHeader] == "1"
    }

    /// A keyed hash and an indexed read that finds nothing, as a real lookup costs.
    private func fakeRead(on db: any Database) async throws {
        let hash = hasher.hash(UUID().uuidString, for: .registrationToken)
        _ = try await RegistrationTokenRecord.query(on: db).filter(\.$hash == hash).first()
    }

    /// A committed one-row write (with its log flush), as a real redemption's writes cost; it
    /// counts dummies in a counter nobody reads, spread over rows so dummies do not queue.
    private func fakeWrite(on db: any Database) async throws {
        try await RateLimiter().record(Self.dummyRule, key: "shard-\(Int.random(in: 0..<8))", at: Date(), on: db)
    }

    static let dummyRule = RateRule(name: "dummy.requests", limit: .max, window: .seconds(60))

    /// Accepts any well-formed JSON document (a dummy's values are not checked).
    struct WellFormedJSON: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}
