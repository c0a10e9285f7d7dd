import Foundation
import Storage

/// Settings of `verification-server serve` (docs/configuration.md, "Verification server").
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// App-facing API (registration token, TAN, test result), health and metrics.
    public var port = 8081
    /// teleTAN creation and TAN verification; a separate listener, so these endpoints do not
    /// exist on the app-facing port. Expose it only to portals and the submission server.
    public var internalHost = "127.0.0.1"
    public var internalPort = 8082
    public var database = DatabaseLocation.sqlite(path: "verification.sqlite")
    /// PostgreSQL connections per instance (SQLite always uses one).
    public var databasePoolSize = 16
    public var secretFile = "verification.secret"
    /// Public keys (PEM) of the portals allowed to request teleTANs.
    public var trustedPortalKeys: [String] = []
    public var teleTANsPerHour = 1000
    /// Failed `/registrationToken` requests from one address before answers are slowed, and
    /// before the address is refused for `guessLockout`.
    public var guessSlowdownAfter = 5
    public var guessLockoutAfter = 20
    public var guessWindow: Duration = .seconds(60 * 60)
    public var guessLockout: Duration = .seconds(60 * 60)
    /// Take the client address from `X-Forwarded-For` on the app-facing listener (never on the
    /// internal one).
    public var trustProxy = false
    /// TLS on the app-facing listener (usually a reverse proxy terminates TLS there instead).
    public var appTLS: ListenerTLS?
    /// TLS on the internal listener, with a client certificate allow-list for mutual TLS.
    public var internalTLS: ListenerTLS?

    public init() {}
}
