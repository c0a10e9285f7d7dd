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
        try await sql(db).raw("""
            INSERT INTO teletans (id, hash, type, created_at, valid_until, redeemed_at, requested_by)
            VALUES (\(bind: UUID()), \(bind: hasher.hash(teleTAN.value, for: .teleTANStorage)), \(bind: request.type.rawValue),
                    \(bind: issuedAt), \(bind: validUntil), NULL, \(bind: request.requestedBy))
            """).run()
        return IssuedTeleTAN(teleTAN: teleTAN, type: request.type, issuedAt: issuedAt, validUntil: validUntil)
    }

}
