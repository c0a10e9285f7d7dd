import CoreMetrics
import Prometheus

/// Prometheus metrics of the verification server, with a registry owned by the instance.
struct ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private var factory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: registry) }

    func count(_ label: String, _ dimensions: [(String, String)] = []) {
        Counter(label: label, dimensions: dimensions, factory: factory).increment()
    }

    func render() -> String { registry.emitToString() }
}
