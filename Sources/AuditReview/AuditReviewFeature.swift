import Audit
import FluentKit
import Foundation
import PortalWeb
import Storage
import Verification

/// The admins' review of the audit trail: search, one entry, the teleTAN lookup, exports, charts
/// and the chain's tamper evidence (checks and signed checkpoints); and the signed-in sessions and
/// sign-in locks. Its periodic work signs checkpoints and applies the audit retention.
package struct AuditReviewFeature: PortalFeature {
    package static let strings = AuditReviewStrings.table
    package static let migrations: [any Migration] = [AddSearchIndexes()]

    let audit: AuditController
    let export: ExportController
    let charts: ChartsController
    let sessions: SessionsController
    let integrity: AuditIntegrity

    package init(foundation: WebFoundation, verification: any VerificationService, integrity: AuditIntegrity) {
        let search = AuditSearch()
        self.integrity = integrity
        audit = AuditController(
            database: foundation.database, search: search,
            lookup: TeleTANLookup(hasher: foundation.hasher, service: verification, search: search),
            screen: TeleTANScreen(hasher: foundation.hasher),
            integrity: integrity, fullCheck: BackgroundCheck(), audit: foundation.audit, renderer: foundation.renderer, now: foundation.now)
        export = ExportController(
            database: foundation.database, search: search, screen: TeleTANScreen(hasher: foundation.hasher), audit: foundation.audit,
            renderer: foundation.renderer, now: foundation.now)
        charts = ChartsController(
            database: foundation.database, statistics: AuditStatistics(), audit: foundation.audit, renderer: foundation.renderer,
            now: foundation.now)
        sessions = SessionsController(
            database: foundation.database, directory: SessionDirectory(store: foundation.sessions),
            audit: foundation.audit, renderer: foundation.renderer, now: foundation.now)
    }

    package func addRoutes(to routes: DeclaredRoutes) {
        audit.addRoutes(to: routes)
        export.addRoutes(to: routes)
        charts.addRoutes(to: routes)
        sessions.addRoutes(to: routes)
    }

    /// Signs a checkpoint when the last is older than the interval, then deletes entries past the
    /// retention time behind a checkpoint at the cut (see ``AuditIntegrity``).
    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        let report = try await integrity.runScheduled(now: now, on: db)
        if let broken = report.brokenVerification {
            // Nothing past the break is signed, and nothing is deleted; an operator must look.
            db.logger.critical("audit trail broken: \(broken.summary); nothing signed over it, nothing deleted")
        }
    }
}
