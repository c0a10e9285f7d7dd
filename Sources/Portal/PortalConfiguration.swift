import AccessControl
import Foundation
import Hotline
import Issuance
import PortalWeb
import Storage

/// Everything an operator can set; `portal serve` fills it from flags and environment variables
/// (docs/configuration.md). Defaults are the embedded, single-machine setup.
package struct PortalConfiguration: Sendable {
    package var host = "127.0.0.1"
    package var port = 8080
    /// The metrics listener (`GET /metrics`), apart from the public one.
    package var metricsHost = "127.0.0.1"
    package var metricsPort = 9464
    package var database = DatabaseLocation.sqlite(path: "portal.sqlite")
    /// PostgreSQL connections per instance (SQLite always uses one).
    package var databasePoolSize = 16
    package var secretFile = "portal.secret"
    package var pamService = "teletan-portal"
    package var pamThreads = 16
    /// The longest a sign-in waits for PAM (a directory that hangs); then "sign-in unavailable".
    package var pamTimeout: Duration = .seconds(20)
    package var roleGroups = RoleGroups()

    /// Sessions: idle timeout and absolute lifetime.
    package var idleTimeout: Duration = .seconds(15 * 60)
    package var sessionLifetime: Duration = .seconds(8 * 60 * 60)

    /// Sign-in throttling: failures per username before that username is locked, and for how long.
    package var signInFailuresPerUser = 5
    /// Failures per client address (over all usernames) before the address is locked. Far above
    /// the per-user limit, so one person's typos never lock out an office behind one NAT address.
    package var signInFailuresPerAddress = 50
    package var signInWindow: Duration = .seconds(15 * 60)
    package var signInLockout: Duration = .seconds(15 * 60)
    /// The least time a failed sign-in takes, so that it does not tell whether the account exists.
    package var signInFailureTime: Duration = .seconds(1)

    /// teleTAN limits: per officer, and for the whole verification service.
    package var teleTANMinimumInterval: Duration = .seconds(30)
    package var teleTANsPerUserPerDay = 100
    package var teleTANsPerHourGlobal = 1000
    /// The daily quota of the portal and of each health authority (`--daily-quota` and the
    /// prediction's bounds and factor).
    package var dailyQuota = DailyQuotaSettings()
    /// How long the result page shows a teleTAN before it is hidden again.
    package var teleTANDisplayTime: Duration = .seconds(10 * 60)

    /// Who may ask for EVENT teleTANs (`--health-authorities FILE`); none by default.
    package var healthAuthorities = HealthAuthorities()
    /// `--event-approval two-person`: an EVENT teleTAN needs a second event officer's approval.
    package var eventApprovalByTwo = false
    /// The hotline call's checks (`--hotline-checks FILE`).
    package var hotlineChecks = HotlineChecks.standard
    /// A callback's contact data is deleted this long after queueing at the latest.
    package var callbackRetention: Duration = .seconds(60 * 60)
    /// The numbers the hotline calls back (`--callback-numbers`; default German fixed-line and mobile).
    package var callbackNumbers = CallbackNumberPolicy.standard

    /// The private key that signs audit checkpoints (`--audit-checkpoint-key`); created with its
    /// public key next to it when missing.
    package var auditCheckpointKey = "audit-checkpoint-key.pem"
    /// How often a checkpoint of the audit chain is signed (`--audit-checkpoint-interval`).
    package var auditCheckpointInterval: Duration = .seconds(60 * 60)
    /// How often the whole audit trail is checked in the background (`--audit-full-check-interval`).
    package var auditFullCheckInterval: Duration = .seconds(24 * 60 * 60)
    /// Audit entries older than this are deleted behind a signed checkpoint (`--audit-retention`).
    package var auditRetention: Duration = .seconds(400 * 24 * 60 * 60)

    /// After SIGTERM, how long the portal still serves with `/health/ready` answering 503 before
    /// it closes its listeners (`--shutdown-drain`): load balancers that check readiness move
    /// traffic away meanwhile.
    package var shutdownDrain: Duration = .seconds(5)

    /// Where browsers reach the portal (`--public-url`); nil for this listener's own address.
    package var publicURL: String?

    /// The authority's time zone, in which pages show times.
    package var timeZone = TimeZone(identifier: "Europe/Berlin")!

    /// Trust `X-Forwarded-For` and `X-Forwarded-Proto` from a reverse proxy in front.
    package var trustProxy = false

    /// Directories to read the page templates and static files from instead of the ones built
    /// into the binary; nil for the built-in ones.
    package var templatesDirectory: String?
    package var publicDirectory: String?

    package init() {}
}

extension PortalConfiguration {
    /// The public URL's origin; without one, this listener's own address and port.
    var publicOrigin: PublicOrigin {
        publicURL.flatMap(PublicOrigin.init) ?? Self.listenerOrigin(host: host, port: port)!
    }

    /// `http://HOST:PORT` of a listener; an IPv6 address in brackets, given with or without them.
    package static func listenerOrigin(host: String, port: Int) -> PublicOrigin? {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return PublicOrigin("http://\(bare.contains(":") ? "[\(bare)]" : bare):\(port)")
    }
}
