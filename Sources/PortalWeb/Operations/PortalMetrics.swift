import CoreMetrics
import Foundation
import Prometheus

/// The portal's Prometheus metrics, through swift-metrics with a factory owned by this instance
/// (no process-wide bootstrap, so tests can build many applications).
package struct PortalMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // PAM may take up to --pam-timeout (20 s by default); the default buckets end at 10 s.
        factory.durationHistogramBuckets["portal_pam_duration_seconds"] =
            [.milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(3),
             .seconds(5), .seconds(10), .seconds(20), .seconds(30)]
        self.factory = factory
    }

    func request(method: String, status: Int, duration: Duration) {
        let dimensions = [("method", method), ("status", String(status))]
        Counter(label: "portal_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "portal_http_request_duration_seconds", dimensions: [("method", method)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    package func signIn(outcome: String) {
        Counter(label: "portal_signins_total", dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    package func teleTANIssued(type: String) {
        Counter(label: "portal_teletans_issued_total", dimensions: [("type", type)], factory: factory).increment()
    }

    package func rateLimited(scope: String) {
        Counter(label: "portal_rate_limit_hits_total", dimensions: [("scope", scope)], factory: factory).increment()
    }

    /// How long PAM took to answer one step of a sign-in (password or one-time code), whatever
    /// the outcome: a slow directory or OATH file shows here before officers complain.
    package func pamStep(duration: Duration) {
        Timer(label: "portal_pam_duration_seconds", factory: factory).recordNanoseconds(Self.nanoseconds(duration))
    }

    /// The state all instances share, read from the database at each scrape (``SharedState``):
    /// whether the database answers, and the audit trail's last verification and checkpoint.
    package func record(_ state: SharedState) {
        Gauge(label: "portal_database_up", factory: factory).record(state.databaseReachable ? 1 : 0)
        if let verification = state.lastVerification {
            Gauge(label: "portal_audit_chain_intact", factory: factory).record(verification.intact ? 1 : 0)
            Gauge(label: "portal_audit_last_verification_timestamp_seconds", factory: factory)
                .record(verification.at.timeIntervalSince1970)
        }
        if let checkpoint = state.lastCheckpoint {
            Gauge(label: "portal_audit_last_checkpoint_timestamp_seconds", factory: factory).record(checkpoint.timeIntervalSince1970)
        }
        for quota in state.dailyQuotas {
            Gauge(label: "portal_daily_quota_teletans", dimensions: [("scope", quota.scope)], factory: factory).record(quota.limit)
            Gauge(label: "portal_daily_quota_used_teletans", dimensions: [("scope", quota.scope)], factory: factory).record(quota.used)
        }
    }

    /// Today's daily quota of one scope (`portal`, `health_authority:ID`), raises included, and
    /// what was used of it.
    package struct DailyQuota: Sendable {
        package let scope: String
        package let limit: Int
        package let used: Int

        package init(scope: String, limit: Int, used: Int) {
            self.scope = scope
            self.limit = limit
            self.used = used
        }
    }

    package struct SharedState: Sendable {
        package var databaseReachable: Bool
        /// nil: none recorded yet, or the database did not answer (the gauges keep their last value).
        package var lastVerification: (intact: Bool, at: Date)?
        package var lastCheckpoint: Date?
        /// Today's daily quotas (empty: the database did not answer).
        package var dailyQuotas: [DailyQuota]

        package init(
            databaseReachable: Bool, lastVerification: (intact: Bool, at: Date)? = nil, lastCheckpoint: Date? = nil,
            dailyQuotas: [DailyQuota] = []
        ) {
            self.databaseReachable = databaseReachable
            self.lastVerification = lastVerification
            self.lastCheckpoint = lastCheckpoint
            self.dailyQuotas = dailyQuotas
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    package func render() -> String {
        registry.emitToString()
    }
}
