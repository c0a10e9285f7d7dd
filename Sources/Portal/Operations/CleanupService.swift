import Audit
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Verification

/// Once a minute: deletes expired sessions (auditing each as expired), stale form nonces,
/// teleTANs that were never shown, and spent rate-limit counters. Every step is a conditional
/// DELETE, so several instances running it at once do no harm and audit nothing twice.
struct CleanupService: Service {
    let database: PortalDatabase
    let sessions: SessionStore
    let nonces: FormNonces
    let displays: PendingDisplays
    let audit: AuditLog
    let displayTime: Duration
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

    func runOnce() async throws {
        let db = database.database(logger: logger)
        let time = now()
        try await db.transaction { tx in
            for expired in try await sessions.removeExpired(now: time, on: tx) {
                try await audit.append(AuditEvent(action: .sessionExpired, outcome: .success, actor: expired.username), at: time, on: tx)
            }
        }
        try await nonces.purge(olderThan: time.addingTimeInterval(-(nonces.lifetime + FormNonces.clockSkewAllowance * 2).seconds), on: db)
        try await displays.purge(olderThan: time.addingTimeInterval(-displayTime.seconds), on: db)
        try await TeleTANRecord.purge(olderThan: time.addingTimeInterval(-TeleTANLifecycle.retention), on: db)
        try await RateLimiter().purge(before: time, on: db)
        try await Lockouts().purge(before: time, on: db)
    }
}
