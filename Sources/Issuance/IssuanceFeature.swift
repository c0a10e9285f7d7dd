import FluentKit
import Foundation
import PortalWeb
import Verification

/// Issuing TEST teleTANs: the start page's form, the once-only result page, and the cleanup of
/// teleTANs that were never shown.
package struct IssuanceFeature: PortalFeature {
    package static let strings = IssuanceStrings.table

    package struct Settings: Sendable {
        /// The shortest time between two teleTANs of one user; zero switches it off.
        package var minimumInterval: Duration = .seconds(30)
        package var perUserPerDay = 100
        /// How long the result page shows a teleTAN before it is hidden again.
        package var displayTime: Duration = .seconds(10 * 60)
        package init() {}
    }

    package let issuer: TeleTANIssuer
    package let displays: PendingDisplays
    let controller: TeleTANController

    package init(foundation: WebFoundation, verification: any VerificationService, settings: Settings) {
        displays = PendingDisplays(
            serverSecret: foundation.serverSecret, hasher: foundation.hasher, audit: foundation.audit, displayTime: settings.displayTime)
        issuer = TeleTANIssuer(
            database: foundation.database, service: verification, nonces: foundation.nonces, displays: displays,
            audit: foundation.audit, hasher: foundation.hasher, minimumInterval: settings.minimumInterval,
            perDay: settings.perUserPerDay, metrics: foundation.metrics, now: foundation.now)
        controller = TeleTANController(
            database: foundation.database, csrf: foundation.csrf, issuer: issuer, nonces: foundation.nonces,
            displays: displays, renderer: foundation.renderer, now: foundation.now)
    }

    package func addRoutes(to routes: DeclaredRoutes) {
        controller.addRoutes(to: routes)
    }

    /// teleTANs parked for a result page nobody opened in time (audited), and teleTAN records
    /// past their retention.
    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        try await displays.purgeExpired(now: now, on: db)
        try await TeleTANRecord.purge(olderThan: now.addingTimeInterval(-TeleTANLifecycle.retention), on: db)
    }
}
