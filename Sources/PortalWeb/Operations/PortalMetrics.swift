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
        factory = PrometheusMetricsFactory(registry: registry)
    }

    func request(method: String, status: Int, duration: Duration) {
        let dimensions = [("method", method), ("status", String(status))]
        Counter(label: "portal_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "portal_http_request_duration_seconds", dimensions: [("method", method)], factory: factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
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

    package func render() -> String {
        registry.emitToString()
    }
}
