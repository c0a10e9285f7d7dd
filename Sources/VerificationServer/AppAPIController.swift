import FluentKit
import Foundation
import Hummingbird
import HTTPTypes
import Storage
import TeleTAN
import Verification

/// The app-facing CWA API: `/registrationToken`, `/tan`, `/testresult`.
///
/// Dummy requests (`cwa-fake: 1`) do work of the same kind (hashing, one indexed read), change
/// nothing and get a response of the same status, headers and size as a real one.
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
        let body = try await request.decode(as: RegistrationTokenRequest.self, context: context)
        let db = database.database(logger: context.logger)
        if isFake(request) {
            try await fakeWork(body.key, on: db)
            return PaddedResponse.registrationToken(UUID().uuidString.lowercased())
        }
        switch body.keyType {
        case "TELETAN": break
        case "GUID": throw HTTPError(.badRequest, message: "keyType GUID is not supported by this server (teleTAN only)")
        default: throw HTTPError(.badRequest, message: "keyType must be TELETAN")
        }
        let address = context.clientAddress ?? "unknown"
        try await guessing.checkAllowed(address: address, on: db)
        do {
            let token = try await lifecycle.registrationToken(for: body.key, on: db)
            metrics.count("verification_registration_tokens_total")
            return PaddedResponse.registrationToken(token)
        } catch TeleTANLifecycle.Refusal.invalidTeleTAN {
            metrics.count("verification_invalid_teletans_total")
            try await guessing.recordFailure(address: address, on: db)
            throw HTTPError(.badRequest, message: "invalid, unknown, expired or already redeemed teleTAN")
        }
    }

    @Sendable func tan(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decode(as: TokenRequest.self, context: context)
        let db = database.database(logger: context.logger)
        if isFake(request) {
            try await fakeWork(body.registrationToken, on: db)
            return PaddedResponse.tan(UUID().uuidString.lowercased())
        }
        do {
            return PaddedResponse.tan(try await lifecycle.tan(for: body.registrationToken, on: db))
        } catch TeleTANLifecycle.Refusal.tanAlreadyIssued {
            throw HTTPError(.badRequest, message: "a TAN was already issued for this registration token")
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.badRequest, message: "unknown registration token")
        }
    }

    @Sendable func testResult(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decode(as: TokenRequest.self, context: context)
        let db = database.database(logger: context.logger)
        if isFake(request) {
            try await fakeWork(body.registrationToken, on: db)
            return PaddedResponse.testResult(sessionCreated: Date())
        }
        do {
            return PaddedResponse.testResult(sessionCreated: try await lifecycle.sessionCreation(of: body.registrationToken, on: db))
        } catch is TeleTANLifecycle.Refusal {
            throw HTTPError(.badRequest, message: "unknown registration token")
        }
    }

    private func isFake(_ request: Request) -> Bool {
        request.headers[Self.fakeHeader] == "1"
    }

    /// What a real request costs, without its effects: a keyed hash and one indexed read.
    private func fakeWork(_ value: String, on db: any Database) async throws {
        let hash = hasher.hash(value + UUID().uuidString, for: .registrationToken)
        _ = try await RegistrationTokenRecord.query(on: db).filter(\.$hash == hash).first()
    }
}
