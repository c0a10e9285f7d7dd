import FluentKit
import Foundation
import PortalWeb
import Storage
import Verification

/// Issuing teleTANs: the start page's forms (TEST; EVENT for a health authority, optionally
/// under the four-eyes rule), the once-only result page, "My recent teleTANs" with revocation,
/// and the cleanup of teleTANs that were never shown.
package struct IssuanceFeature: PortalFeature {
    package static let strings = IssuanceStrings.table
    package static let migrations: [any Migration] = [CreateIssuedTeleTANs(), CreateEventRequests(), AddReasonsAndCalls(), CreateDailyQuotas()]

    package struct Settings: Sendable {
        /// The shortest time between two teleTANs of one user; zero switches it off.
        package var minimumInterval: Duration = .seconds(30)
        package var perUserPerDay = 100
        /// How long the result page shows a teleTAN before it is hidden again.
        package var displayTime: Duration = .seconds(10 * 60)
        /// Who may ask for EVENT teleTANs (`--health-authorities`).
        package var healthAuthorities = HealthAuthorities()
        /// `--event-approval two-person`: an EVENT teleTAN needs a second event officer's approval.
        package var eventApprovalByTwo = false
        /// The daily quota (`--daily-quota` and its prediction's bounds and factor).
        package var dailyQuota = DailyQuotaSettings()
        package init() {}
    }

    package let issuer: TeleTANIssuer
    package let displays: PendingDisplays
    let controller: TeleTANController
    let events: EventController
    let recent: RecentController
    let quota: QuotaController

    /// `calls` looks up the hotline calls of hotline teleTANs for "My recent teleTANs" (the
    /// hotline feature depends on this one, so the app composition hands it in).
    package init(foundation: WebFoundation, verification: any VerificationService, settings: Settings, calls: CallSummaries? = nil) {
        displays = PendingDisplays(
            hasher: foundation.hasher, audit: foundation.audit, displayTime: settings.displayTime)
        issuer = TeleTANIssuer(
            database: foundation.database, service: verification, nonces: foundation.nonces, displays: displays,
            audit: foundation.audit, hasher: foundation.hasher, minimumInterval: settings.minimumInterval,
            perDay: settings.perUserPerDay,
            quotas: DailyQuotas(
                settings: settings.dailyQuota, timeZone: foundation.renderer.timeZone, healthAuthorities: settings.healthAuthorities),
            metrics: foundation.metrics, now: foundation.now)
        events = EventController(
            database: foundation.database, issuer: issuer, nonces: foundation.nonces,
            authorities: settings.healthAuthorities, twoPerson: settings.eventApprovalByTwo, audit: foundation.audit,
            renderer: foundation.renderer, now: foundation.now)
        controller = TeleTANController(
            database: foundation.database, issuer: issuer, nonces: foundation.nonces,
            displays: displays, events: events, renderer: foundation.renderer, now: foundation.now)
        recent = RecentController(
            database: foundation.database, service: verification,
            revoker: TeleTANRevoker(service: verification, audit: foundation.audit), calls: calls,
            renderer: foundation.renderer, now: foundation.now)
        quota = QuotaController(
            database: foundation.database, quotas: issuer.quotas, authorities: settings.healthAuthorities, audit: foundation.audit,
            renderer: foundation.renderer, now: foundation.now)
    }

    package func addRoutes(to routes: DeclaredRoutes) {
        controller.addRoutes(to: routes)
        events.addRoutes(to: routes)
        recent.addRoutes(to: routes)
        quota.addRoutes(to: routes)
    }

    /// teleTANs parked for a result page nobody opened in time (audited), teleTAN records past
    /// their retention, the list of issued teleTANs past its week, and EVENT requests past
    /// their time; today's daily quotas are predicted (once a day: see ``DailyQuotas/prepare(at:on:)``).
    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        try await issuer.quotas.prepare(at: now, on: db)
        try await issuer.quotas.purge(at: now, on: db)
        try await displays.purgeExpired(now: now, on: db)
        try await TeleTANRecord.purge(olderThan: now.addingTimeInterval(-TeleTANLifecycle.retention), on: db)
        try await IssuedTeleTANs().purge(now: now, on: db)
        try await EventRequests().expire(now: now, on: db)
    }
}
