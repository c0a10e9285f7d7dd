import Foundation
import ServiceAuth
import Storage

/// Settings of `verification-server serve` (docs/configuration.md, "`verification-server serve` and `verification-server migrate`").
package struct ServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// App-facing API (registration token, TAN, test result) and health.
    package var port = 8081
    /// teleTAN creation and TAN verification; a separate listener, so these endpoints do not
    /// exist on the app-facing port. Expose it only to portals and the submission server.
    package var internalHost = "127.0.0.1"
    package var internalPort = 8082
    package var database = DatabaseLocation.sqlite(path: "verification.sqlite")
    /// PostgreSQL connections per instance (SQLite always uses one).
    package var databasePoolSize = 16
    package var secretFile = "verification.secret"
    /// Public keys (PEM) of the portals allowed to request teleTANs.
    package var trustedPortalKeys: [String] = []
    /// The `aud` a portal token must name (a token for another server is refused).
    package var audience = PortalTokenPayload.defaultAudience
    /// Keycloak realms (base URLs, as CWA's `jwt.server`) whose RS256 tokens are accepted.
    package var trustedRealms: [String] = []
    package var teleTANsPerHour = 1000
    /// Failed `/registrationToken` requests from one address before answers are slowed, and
    /// before the address is refused for `guessLockout`.
    package var guessSlowdownAfter = 5
    package var guessLockoutAfter = 20
    package var guessWindow: Duration = .seconds(60 * 60)
    package var guessLockout: Duration = .seconds(60 * 60)
    /// Take the client address from `X-Forwarded-For` on the app-facing listener (never on the
    /// internal one).
    package var trustProxy = false
    /// TLS on the app-facing listener (usually a reverse proxy terminates TLS there instead).
    package var appTLS: ListenerTLS?
    /// TLS on the internal listener, with a client certificate allow-list for mutual TLS.
    package var internalTLS: ListenerTLS?

    package init() {}
}
