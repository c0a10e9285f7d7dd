import AccessControl
import FluentKit
import Foundation
import PAMAuth
import PortalWeb

/// Sign-in through PAM (any number of steps), throttling, and sign-out.
package struct SignInFeature: PortalFeature {
    package static let strings = SignInStrings.table

    package struct Settings: Sendable {
        package var roleGroups = RoleGroups()
        package var failuresPerUser = 5
        package var failuresPerAddress = 50
        package var window: Duration = .seconds(15 * 60)
        package var lockout: Duration = .seconds(15 * 60)
        /// The least time a failed sign-in takes (`--signin-failure-time`, ``FailureTime``).
        package var failureTime: Duration = .seconds(1)
        package init() {}
    }

    let controller: SignInController
    package let policy: SignInPolicy
    package var throttle: SignInThrottle { policy.throttle }

    /// The path a new session starts at, worked out by the app from the other features' state.
    package typealias Landing = @Sendable (_ username: String, _ roles: Set<Role>, _ db: any Database) async throws -> String

    package init(foundation: WebFoundation, pam: PAMAuthenticator, settings: Settings, landing: @escaping Landing = { _, _, _ in "/" }) {
        policy = SignInPolicy(
            throttle: SignInThrottle(
                failuresPerUser: settings.failuresPerUser, failuresPerAddress: settings.failuresPerAddress,
                window: settings.window, lockout: settings.lockout),
            audit: foundation.audit, metrics: foundation.metrics, now: foundation.now)
        controller = SignInController(
            database: foundation.database, pam: pam, roleGroups: settings.roleGroups, sessions: foundation.sessions,
            policy: policy, csrf: foundation.csrf, forms: foundation.forms, audit: foundation.audit, renderer: foundation.renderer,
            metrics: foundation.metrics, gate: SignInGate(limit: pam.configuration.threads), landing: landing,
            failureTime: FailureTime(minimum: settings.failureTime), now: foundation.now)
    }

    package func addRoutes(to routes: DeclaredRoutes) {
        controller.addRoutes(to: routes)
    }

    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        try await controller.recordBusyRefusals(now: now, on: db)
    }
}
