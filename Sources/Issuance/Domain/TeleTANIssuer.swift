import AccessControl
import Audit
import FluentKit
import Foundation
import Logging
import PortalWeb
import Storage
import TeleTAN
import Verification

/// Issues a teleTAN for a signed-in officer: one per form nonce, within the officer's limits,
/// through the ``VerificationService``, audited, and parked (sealed) for the one page view that
/// shows it. All of that is one database transaction: if the audit entry cannot be written, the
/// teleTAN is neither stored nor shown.
///
/// It takes who acts as an ``ActingUser``, never an HTTP request, so that other features (a
/// hotline call) issue through the same code.
package struct TeleTANIssuer: Sendable {
    package enum Outcome: Equatable {
        /// A teleTAN is waiting for the result page.
        case issued(type: TeleTANType)
        /// The form was already used (a double click or a replay); nothing new was created.
        case formAlreadyUsed
        /// The form's one-use token was not made for this session, changed, or too old (a page
        /// left open past the session lifetime); nothing was created.
        case formInvalid
        /// A teleTAN issued earlier is still waiting to be shown to this session; nothing new was
        /// created, so that it is never replaced unseen.
        case teleTANWaiting
        /// What the teleTAN was for refused it (the hotline call was ended meanwhile, the EVENT
        /// approval was used already); nothing is shown.
        case refused(reason: String)
    }

    let database: PortalDatabase
    let service: any VerificationService
    let nonces: FormNonces
    let displays: PendingDisplays
    let issuedTeleTANs = IssuedTeleTANs()
    let audit: AuditLog
    let hasher: KeyedHasher
    let minimumInterval: RateRule
    let dailyLimit: RateRule
    /// The daily quota of the portal and of each health authority.
    package let quotas: DailyQuotas
    let metrics: PortalMetrics
    let now: @Sendable () -> Date

    package init(
        database: PortalDatabase, service: any VerificationService, nonces: FormNonces, displays: PendingDisplays,
        audit: AuditLog, hasher: KeyedHasher, minimumInterval: Duration, perDay: Int, quotas: DailyQuotas, metrics: PortalMetrics,
        now: @escaping @Sendable () -> Date
    ) {
        self.database = database
        self.service = service
        self.nonces = nonces
        self.displays = displays
        self.audit = audit
        self.hasher = hasher
        self.minimumInterval = RateRule(name: "teletan.user.interval", limit: 1, window: minimumInterval)
        self.dailyLimit = RateRule(name: "teletan.user.day", limit: perDay, window: .seconds(24 * 60 * 60))
        self.quotas = quotas
        self.metrics = metrics
        self.now = now
    }

    /// Issues as the variant below, checking `nonce` now: for callers without a form (the domain
    /// tests; for a submitted form, ``FormCheck`` has checked its nonce already).
    package func issue(
        type: TeleTANType, by user: ActingUser, nonce: String, for purpose: IssuancePurpose = IssuancePurpose()
    ) async throws -> Outcome {
        try await issue(
            type: type, by: user, nonce: FormNonce(nonce, checkedWith: nonces, sessionHash: user.sessionHash, now: now()), for: purpose)
    }

    /// Issues a teleTAN of `type` for `user`, once for the form `nonce` (made for the user's
    /// session; nil or not valid: `.formInvalid`), for what `purpose` says (a hotline call, a
    /// health authority). Throws ``IssuanceError`` when a limit is reached or no teleTAN could be
    /// made.
    package func issue(
        type: TeleTANType, by user: ActingUser, nonce: FormNonce?, for purpose: IssuancePurpose = IssuancePurpose()
    ) async throws -> Outcome {
        let time = now()
        let db = database.database(logger: user.logger)
        let event: @Sendable (AuditEvent.Outcome, String?, [String: String]) -> AuditEvent = { outcome, subject, details in
            AuditEvent(.teleTANIssue, outcome, by: user, subject: subject,
                       details: details.merging(purpose.auditDetails) { own, _ in own })
        }
        let request = TeleTANRequest(type: type, requestedBy: user.username, requestID: user.requestID, roles: user.roles.cwaRoles)
        // Takes the form's nonce and counts the officer's limits; the refusal if the form cannot
        // be used or a teleTAN is still waiting to be shown, nil if it was taken.
        let claimForm: @Sendable (any Database) async throws -> Outcome? = { tx in
            switch try await nonces.consume(nonce?.checked, on: tx) {
            case .claimed: break
            case .alreadyUsed:
                try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": "form_already_used"]), at: time, on: tx)
                return .formAlreadyUsed
            case .invalid:
                try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": "form_invalid"]), at: time, on: tx)
                return .formInvalid
            }
            if try await displays.settleWaiting(sessionHash: user.sessionHash, now: time, on: tx) {
                try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": "teletan_waiting"]), at: time, on: tx)
                return .teleTANWaiting
            }
            try await RateLimiter().consume(userLimits(user), at: time, on: tx)
            // Last, just before the teleTAN is made: a refused form or limit takes no quota.
            try await quotas.take(quotaScopes(purpose), at: time, on: tx)
            return nil
        }
        // Parks the new teleTAN (sealed) for the result page and audits it. The audit append
        // comes last: it locks the chain head until commit, so it should hold it briefly.
        let record: @Sendable (IssuedTeleTAN, any Database) async throws -> Void = { issued, tx in
            let fingerprint = hasher.hash(issued.teleTAN.value, for: .teleTANFingerprint)
            // The row id of "My recent teleTANs", chosen now so that the result page can show
            // its reference for the call sheet.
            let rowID = UUID()
            // Another issuance for this session got in between (two tabs at once): never replace
            // a teleTAN nobody has seen.
            guard try await displays.store(
                .init(teleTAN: issued.teleTAN.value, type: type.rawValue, validUntil: issued.validUntil, issuedAt: issued.issuedAt,
                      issuedTo: user.username, callID: purpose.callID, healthAuthority: purpose.healthAuthorityName,
                      reference: IssuedTeleTANs.reference(rowID)),
                sessionHash: user.sessionHash, now: time, on: tx)
            else { throw StillWaiting(fingerprint: fingerprint) }
            do {
                try await purpose.onIssued?(fingerprint, tx)
            } catch let refusal as IssuanceRefusal {
                throw RefusedAfterCreation(reason: refusal.reason, fingerprint: fingerprint, reference: issued.reference)
            }
            try await issuedTeleTANs.record(
                id: rowID, issuedBy: user.username, fingerprint: fingerprint, type: type.rawValue, reference: issued.reference,
                issuedAt: issued.issuedAt, validUntil: issued.validUntil, healthAuthority: purpose.auditDetails["health_authority"],
                callID: purpose.callID, on: tx)
            try await audit.append(event(
                .success, fingerprint,
                ["type": type.rawValue, "valid_until": issued.validUntil.formatted(.iso8601)]
            ), at: time, on: tx)
        }
        do {
            if service.sharesDatabase {
                // Embedded: creation, audit entry and display commit together, or not at all.
                let outcome: Outcome = try await db.transaction { tx in
                    if let refused = try await claimForm(tx) { return refused }
                    try await record(try await service.issueTeleTAN(request, within: tx), tx)
                    return .issued(type: type)
                }
                if case .issued = outcome { metrics.teleTANIssued(type: type.rawValue) }
                return outcome
            }
            // Remote: no database transaction stays open during the HTTP call. The form is
            // claimed first (so a double submit still creates one teleTAN); a teleTAN the server
            // created but whose audit entry fails is never shown and simply expires.
            if let refused = try await db.transaction({ try await claimForm($0) }) { return refused }
            let issued: IssuedTeleTAN
            do {
                issued = try await service.issueTeleTAN(request, within: db)
            } catch let error as VerificationServiceError {
                // The server made no teleTAN (down, its hourly cap, our credentials): the day's
                // quota gets its unit back, so that retries during an outage do not use it up.
                try? await quotas.giveBack(quotaScopes(purpose), at: time, on: db)
                throw error
            }
            try await db.transaction { try await record(issued, $0) }
            metrics.teleTANIssued(type: type.rawValue)
            return .issued(type: type)
        } catch let refusal as RefusedAfterCreation {
            if service.sharesDatabase {
                // Embedded: nothing was committed.
                try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": refusal.reason]), at: time, on: db)
            } else {
                // Remote: the server made a teleTAN nobody will see; revoke it where the server can.
                var revoked = "not_supported"
                if let reference = refusal.reference {
                    revoked = (try? await service.revoke(
                        reference: reference, issuer: Issuer(username: user.username, roles: user.roles.cwaRoles), within: db
                    ).rawValue) ?? "unavailable"
                }
                try await audit.append(event(
                    .refused, refusal.fingerprint, ["type": type.rawValue, "reason": refusal.reason, "revoked": revoked]), at: time, on: db)
            }
            return .refused(reason: refusal.reason)
        } catch let waiting as StillWaiting {
            // Embedded: nothing was committed. Remote: the server made a teleTAN nobody will see.
            try await audit.append(event(
                .refused, service.sharesDatabase ? nil : waiting.fingerprint, ["type": type.rawValue, "reason": "teletan_waiting"]),
                at: time, on: db)
            return .teleTANWaiting
        } catch let limited as RateLimitExceeded {
            metrics.rateLimited(scope: "user")
            try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": "rate_limit", "rule": limited.rule.name]), at: time, on: db)
            throw IssuanceError.tooManyRequests(retryAfterSeconds: Self.seconds(limited.retryAfter), global: false)
        } catch let exhausted as DailyQuotaExhausted {
            metrics.rateLimited(scope: "daily_quota")
            try await audit.append(event(
                .refused, nil, ["type": type.rawValue, "reason": "daily_quota", "quota": exhausted.scope]), at: time, on: db)
            throw IssuanceError.dailyQuotaReached(retryAfterSeconds: Self.seconds(.seconds(exhausted.resetsAt.timeIntervalSince(time))))
        } catch VerificationServiceError.globalLimitReached(let retryAfter) {
            metrics.rateLimited(scope: "global")
            try await audit.append(event(.refused, nil, ["type": type.rawValue, "reason": "global_limit"]), at: time, on: db)
            throw IssuanceError.tooManyRequests(retryAfterSeconds: Self.seconds(retryAfter), global: true)
        } catch VerificationServiceError.credentialsRefused {
            try await audit.append(event(.failure, nil, ["type": type.rawValue, "reason": "service_refused_credentials"]), at: time, on: db)
            throw IssuanceError.serviceRefusedCredentials
        } catch VerificationServiceError.unavailable(let reason) {
            try await audit.append(event(.failure, nil, ["type": type.rawValue, "reason": "service_unavailable", "detail": reason]), at: time, on: db)
            throw IssuanceError.serviceUnavailable
        } catch let error where PortalDatabase.isUnavailable(error) {
            // The database is away (restarting, read-only, full): nothing was committed, nothing is
            // shown, and there is nowhere to write an audit entry. The 503 page says to retry soon.
            throw error
        } catch {
            // The database (or the audit write) failed: nothing was committed, nothing is shown.
            user.logger.error("teleTAN issuance failed", metadata: ["error": "\(String(reflecting: Swift.type(of: error)))"])
            _ = try? await audit.append(event(.failure, nil, ["type": type.rawValue, "reason": "internal_error"]), at: time, on: db)
            throw IssuanceError.serviceUnavailable
        }
    }

    private struct StillWaiting: Error { let fingerprint: String }
    private struct RefusedAfterCreation: Error { let reason: String; let fingerprint: String; let reference: String? }

    /// The officer's own limits; an interval of zero is switched off (benchmarks).
    private func userLimits(_ user: ActingUser) -> [(rule: RateRule, key: String)] {
        let rules = minimumInterval.window > .zero ? [minimumInterval, dailyLimit] : [dailyLimit]
        return rules.map { ($0, user.username) }
    }

    /// The daily quotas an issuance takes from: the portal's, and an EVENT teleTAN's health
    /// authority's.
    private func quotaScopes(_ purpose: IssuancePurpose) -> [String] {
        [DailyQuotas.portalScope] + (purpose.auditDetails["health_authority"].map { [DailyQuotas.scope(ofHealthAuthority: $0)] } ?? [])
    }

    static func seconds(_ duration: Duration) -> Int {
        max(1, Int(duration.components.seconds) + (duration.components.attoseconds > 0 ? 1 : 0))
    }
}
