import FluentKit
import Foundation
import Logging
import Storage
import TeleTAN

/// The verification server's teleTAN creation, running inside the caller's process and database.
/// The standalone verification server serves this same type over HTTP.
package struct EmbeddedVerificationService: VerificationService {
    private let hasher: KeyedHasher
    private let globalLimit: RateRule
    private let limiter = RateLimiter()
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// - Parameter globalLimit: CWA allows 1000 teleTANs per rolling hour, both types together;
    ///   a warning is logged from 80 %.
    package init(hasher: KeyedHasher, globalLimit: RateRule, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.hasher = hasher
        self.globalLimit = globalLimit
        self.logger = logger
        self.now = now
    }

    package var sharesDatabase: Bool { true }

    package static func defaultGlobalLimit(perHour limit: Int = 1000) -> RateRule {
        RateRule(name: "teletan.global", limit: limit, window: .seconds(3600))
    }

    package func issueTeleTAN(_ request: TeleTANRequest, within db: any Database) async throws -> IssuedTeleTAN {
        let issuedAt = now()
        do {
            let used = try await limiter.consumeShared(globalLimit, shards: 8, at: issuedAt, on: db)
            if used >= (globalLimit.limit * 8 + 9) / 10 {
                logger.warning("global teleTAN limit at 80 % or more", metadata: ["used": "\(used)", "limit": "\(globalLimit.limit)"])
            }
        } catch let limited as RateLimitExceeded {
            logger.warning("global teleTAN limit reached", metadata: ["limit": "\(globalLimit.limit)"])
            throw VerificationServiceError.globalLimitReached(retryAfter: limited.retryAfter)
        }

        let teleTAN = TeleTAN.random()
        let validUntil = issuedAt.addingTimeInterval(TimeInterval(request.type.validity.components.seconds))
        // 31^9 possible bodies: a collision with a stored hash is practically impossible, and the
        // unique index turns one into an error rather than a duplicate.
        // Plain SQL rather than a Fluent model insert (its reflection was a visible cost).
        let id = UUID()
        try await sql(db).raw("""
            INSERT INTO teletans (id, hash, type, created_at, valid_until, redeemed_at, requested_by)
            VALUES (\(bind: id), \(bind: hasher.hash(teleTAN.value, for: .teleTANStorage)), \(bind: request.type.rawValue),
                    \(bind: issuedAt), \(bind: validUntil), NULL, \(bind: request.requestedBy))
            """).run()
        return IssuedTeleTAN(
            teleTAN: teleTAN, type: request.type, issuedAt: issuedAt, validUntil: validUntil, reference: id.uuidString.lowercased())
    }

    package func statuses(of references: [String], issuer: Issuer, within db: any Database) async -> [String: TeleTANStatus]? {
        try? await statuses(of: references, requestedBy: issuer.username, on: db)
    }

    /// The status of each of `references` (row ids) requested by `requestedBy`; others are left out.
    package func statuses(of references: [String], requestedBy: String, on db: any Database) async throws -> [String: TeleTANStatus] {
        let ids = references.compactMap { UUID(uuidString: $0) }
        guard !ids.isEmpty else { return [:] }
        let time = now()
        var result: [String: TeleTANStatus] = [:]
        for record in try await TeleTANRecord.query(on: db).filter(\.$id ~~ ids).filter(\.$requestedBy == requestedBy).all() {
            guard let id = record.id else { continue }
            result[id.uuidString.lowercased()] = Self.status(of: record, at: time)
        }
        return result
    }

    package func revoke(reference: String, issuer: Issuer, within db: any Database) async throws -> RevocationResult {
        try await revoke(reference: reference, requestedBy: issuer.username, on: db)
    }

    /// Revokes the teleTAN with row id `reference` requested by `requestedBy`, if still unused.
    package func revoke(reference: String, requestedBy: String, on db: any Database) async throws -> RevocationResult {
        guard let id = UUID(uuidString: reference) else { return .notFound }
        let time = now()
        struct Row: Decodable { let id: UUID }
        // Conditional: a redemption at the same moment wins or loses as a whole, never half.
        let revoked = try await sql(db).raw("""
            UPDATE teletans SET revoked_at = \(bind: time)
            WHERE id = \(bind: id) AND requested_by = \(bind: requestedBy)
              AND redeemed_at IS NULL AND revoked_at IS NULL AND valid_until > \(bind: time)
            RETURNING id
            """).all(decoding: Row.self)
        if !revoked.isEmpty { return .revoked }
        guard let record = try await TeleTANRecord.query(on: db).filter(\.$id == id).filter(\.$requestedBy == requestedBy).first()
        else { return .notFound }
        switch Self.status(of: record, at: time) {
        case .redeemed: return .alreadyRedeemed
        case .expired: return .expired
        case .revoked, .unused: return .alreadyRevoked
        }
    }

    static func status(of record: TeleTANRecord, at time: Date) -> TeleTANStatus {
        if record.redeemedAt != nil { return .redeemed }
        if record.revokedAt != nil { return .revoked }
        return record.validUntil > time ? .unused : .expired
    }

}
