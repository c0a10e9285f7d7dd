import Foundation
import Logging
import ServiceLifecycle

/// Once a minute: the periodic work of the web foundation and of every feature (expired
/// sessions, used form nonces, teleTANs never shown, spent counters). Every step is a
/// conditional DELETE, so several instances running it at once do no harm and audit nothing twice.
struct CleanupService: Service {
    let steps: [@Sendable (Date) async throws -> Void]
    let interval: Duration
    let logger: Logger
    let now: @Sendable () -> Date

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        try await runOnce()
                    } catch {
                        logger.warning("cleanup failed; retrying later", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                    }
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            // Graceful shutdown interrupted the sleep: a normal end, not a failure.
        }
    }

    /// Every step, each whatever the others did (one failing step must not stop the rest, such as
    /// a retention purge, for good); the first failure is rethrown at the end.
    func runOnce() async throws {
        let time = now()
        var firstFailure: (any Error)?
        for step in steps {
            do {
                try await step(time)
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }
}
