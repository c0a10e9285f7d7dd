import Logging
import ServiceLifecycle
import Synchronization

/// Whether this instance takes new work. It stops being ready on SIGTERM, before the listener
/// closes, so a load balancer that checks `/health/ready` moves traffic to the other instances
/// while this one still answers.
package final class Readiness: Sendable {
    private let draining = Atomic<Bool>(false)

    package init() {}

    package var isDraining: Bool { draining.load(ordering: .relaxed) }

    package func startDraining() { draining.store(true, ordering: .relaxed) }
}

/// The first service to stop on SIGTERM: `ServiceGroup` stops its services in reverse order, each
/// after the one before it has returned. So this one marks the instance not ready and then waits
/// `period` while the listeners still serve requests under way and new ones; only then are the
/// listeners closed (and requests still under way finished).
package struct ShutdownDrain: Service {
    let readiness: Readiness
    let period: Duration
    let logger: Logger

    package init(readiness: Readiness, period: Duration, logger: Logger) {
        self.readiness = readiness
        self.period = period
        self.logger = logger
    }

    package func run() async throws {
        // Returns on graceful shutdown; throws when the group is cancelled (then nothing to drain).
        guard (try? await gracefulShutdown()) != nil else { return }
        readiness.startDraining()
        logger.notice("shutting down: /health/ready answers 503, still serving until the drain period ends",
                      metadata: ["drain_seconds": "\(period.components.seconds)"])
        // A second signal cancels the group and cuts the wait short.
        try? await Task.sleep(for: period)
    }
}
