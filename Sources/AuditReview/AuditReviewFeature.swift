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
    let log: AuditLog

    package init(foundation: WebFoundation, verification: any VerificationService, integrity: AuditIntegrity) {
        let search = AuditSearch()
        self.integrity = integrity
        log = foundation.audit
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

    /// Checks the whole trail when the last full check is older than its interval; signs a
    /// checkpoint when the last is older than the interval, then deletes entries past the
    /// retention time behind a checkpoint at the cut (see ``AuditIntegrity``). The full check
    /// comes first: a trail it finds broken is not signed in the same minute.
    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        if let full = try await integrity.runScheduledFullCheck(now: now, on: db) {
            try await record(scheduledFullCheck: full, now: now, on: db)
        }
        let report = try await integrity.runScheduled(now: now, on: db)
        if let broken = report.brokenVerification {
            // Nothing past the break is signed, and nothing is deleted; an operator must look.
            db.logger.critical("audit trail broken: \(broken.summary); nothing signed over it, nothing deleted")
        }
    }

    /// Audits the scheduled full check like an admin's (without an actor); a broken trail is
    /// `critical`: until a full check passes, nothing is signed and "checkpoint overdue" follows.
    private func record(scheduledFullCheck full: AuditVerification, now: Date, on db: any Database) async throws {
        var details = ["scope": "full", "checked": String(full.checkedEntries), "reason": "schedule"]
        details["first_bad_seq"] = full.firstBrokenSeq.map(String.init)
        try await log.append(AuditEvent(action: .auditVerify, outcome: full.isIntact ? .success : .failure, details: details), at: now, on: db)
        if full.isIntact {
            db.logger.info("audit trail intact: the scheduled full check checked \(full.checkedEntries) entries")
        } else {
            db.logger.critical("scheduled full check: \(full.summary); no checkpoint is signed until a full check passes")
        }
    }
}
