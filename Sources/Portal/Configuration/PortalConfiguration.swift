import Foundation
import Storage

/// Everything an operator can set; `portal serve` fills it from flags and environment variables
/// (docs/configuration.md). Defaults are the embedded, single-machine setup.
public struct PortalConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var database = DatabaseLocation.sqlite(path: "portal.sqlite")
    /// PostgreSQL connections per instance (SQLite always uses one).
    public var databasePoolSize = 16
    public var secretFile = "portal.secret"
    public var pamService = "teletan-portal"
    public var pamThreads = 16
    public var roleGroups = RoleGroups()

    /// Sessions: idle timeout and absolute lifetime.
    public var idleTimeout: Duration = .seconds(15 * 60)
    public var sessionLifetime: Duration = .seconds(8 * 60 * 60)

    /// Sign-in throttling: failures per username before that username is locked, and for how long.
    public var signInFailuresPerUser = 5
    /// Failures per client address (over all usernames) before the address is locked. Far above
    /// the per-user limit, so one person's typos never lock out an office behind one NAT address.
    public var signInFailuresPerAddress = 50
    public var signInWindow: Duration = .seconds(15 * 60)
    public var signInLockout: Duration = .seconds(15 * 60)

    /// teleTAN limits: per officer, and for the whole verification service.
    public var teleTANMinimumInterval: Duration = .seconds(30)
    public var teleTANsPerUserPerDay = 100
    public var teleTANsPerHourGlobal = 1000
    /// How long the result page shows a teleTAN before it is hidden again.
    public var teleTANDisplayTime: Duration = .seconds(10 * 60)

    /// Trust `X-Forwarded-For` and `X-Forwarded-Proto` from a reverse proxy in front.
    public var trustProxy = false

    public var templatesDirectory = "Templates"
    public var publicDirectory = "Public"

    public init() {}
}

/// Which Unix group grants which role; names configurable so directory groups can be used as
/// they are.
public struct RoleGroups: Sendable, Equatable {
    public var officer = "teletan-officer"
    public var hotline = "teletan-hotline"
    public var event = "teletan-event"
    public var admin = "teletan-admin"

    public init() {}

    public func roles(forGroups groups: [String]) -> Set<Role> {
        var roles = Set<Role>()
        if groups.contains(officer) { roles.insert(.officer) }
        if groups.contains(hotline) { roles.insert(.hotline) }
        if groups.contains(event) { roles.insert(.event) }
        if groups.contains(admin) { roles.insert(.admin) }
        return roles
    }
}
