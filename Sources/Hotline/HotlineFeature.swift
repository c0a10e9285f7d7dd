import AccessControl
import Audit
import FluentKit
import Foundation
import Issuance
import PortalWeb
import Storage

/// The hotline's call workflow: a guided call with recorded checks, the shared callback queue,
/// issuing in a call, the read-back, and the overview of counts.
package struct HotlineFeature: PortalFeature {
    package static let strings = HotlineStrings.table
    package static let migrations: [any Migration] = [CreateHotlineTables(), OneWaitingCallbackPerNumber()]

    package struct Settings: Sendable {
        /// The call script's checks (`--hotline-checks`).
        package var checks = HotlineChecks.standard
        /// Contact data of a callback is deleted this long after queueing at the latest
        /// (`--callback-retention`; CWA promised its users one hour).
        package var callbackRetention: Duration = .seconds(60 * 60)
        /// The numbers a callback may be queued for (`--callback-numbers`): an attacker must not
        /// make the authority call a paid line.
        package var callbackNumbers = CallbackNumberPolicy.standard
        /// A taken callback returns to the queue when its agent leaves it this long.
        package var takeTimeout: Duration = .seconds(15 * 60)
        /// Unanswered attempts after which a callback closes as unreachable.
        package var callbackAttempts = 3
        /// How long a number's fingerprint is kept for the repeat-caller warning.
        package var repeatCallerWindow: Duration = .seconds(14 * 24 * 60 * 60)
        package init() {}
    }

    let calls: CallController
    let queue: CallbackController
    let overview: OverviewController
    let callbacks: Callbacks
    let history: NumberHistory
    let audit: AuditLog

    package init(foundation: WebFoundation, issuance: IssuanceFeature, settings: Settings) {
        let vault = ContactVault(hasher: foundation.hasher)
        callbacks = Callbacks(
            vault: vault, takeTimeout: settings.takeTimeout.seconds, maximumAttempts: settings.callbackAttempts,
            retention: settings.callbackRetention.seconds)
        history = NumberHistory(window: settings.repeatCallerWindow.seconds)
        audit = foundation.audit
        calls = CallController(
            database: foundation.database, checks: settings.checks,
            issuing: CallIssuance(checks: settings.checks, issuer: issuance.issuer, calls: Calls(), history: history, audit: foundation.audit),
            nonces: foundation.nonces, callbacks: callbacks, callbackNumbers: settings.callbackNumbers, vault: vault, history: history, readBack: ReadBack(hasher: foundation.hasher),
            readBackNotes: ReadBackNotes(keyring: foundation.keyring), idleTimeout: foundation.sessions.idleTimeout, displays: issuance.displays, audit: foundation.audit, renderer: foundation.renderer, now: foundation.now)
        queue = CallbackController(
            database: foundation.database, callbacks: callbacks, history: history, audit: foundation.audit,
            renderer: foundation.renderer, now: foundation.now)
        overview = OverviewController(
            database: foundation.database,
            overview: HotlineOverview(callbacks: callbacks, timeZone: foundation.renderer.timeZone),
            renderer: foundation.renderer, now: foundation.now)
    }

    /// Where a hotline agent's new session starts: back in their newest open call (its ticks are
    /// on the server, so a session that timed out mid-call loses nothing), else the hotline page
    /// for an agent with no other role; everyone else at the start page.
    @Sendable package static func landing(username: String, roles: Set<Role>, on db: any Database) async throws -> String {
        guard roles.contains(where: { Permission.granted[$0, default: []].contains(.workHotlineCalls) }) else { return "/" }
        if let call = try await Calls().open(of: username, on: db).first { return CallController.path(call.id) }
        return roles.allSatisfy({ $0 == .hotline }) ? "/hotline" : "/"
    }

    /// "My recent teleTANs" shows the hotline call of a hotline teleTAN: issuance cannot depend on
    /// the hotline (it is the other way round), so its lookup is handed in here.
    package static let callSummaries: CallSummaries = { ids, db in
        let rows = try await Calls().find(ids, on: db)
        return Dictionary(uniqueKeysWithValues: rows.map {
            ($0.id, CallSummary(startedAt: $0.started_at, outcomeKey: "hotline_outcome_\($0.outcome ?? "open")"))
        })
    }

    package func addRoutes(to routes: DeclaredRoutes) {
        calls.addRoutes(to: routes)
        queue.addRoutes(to: routes)
        overview.addRoutes(to: routes)
    }

    /// Contact data past the retention time (each callback audited as expired), calls left open
    /// (audited as abandoned), number fingerprints past their window, and old records.
    package func runPeriodicWork(now: Date, on db: any Database) async throws {
        try await db.transaction { tx in try await callbacks.expire(now: now, auditedIn: audit, on: tx) }
        try await db.transaction { tx in
            for call in try await Calls().closeAbandoned(now: now, on: tx) {
                try await audit.append(AuditEvent(
                    action: .hotlineCallEnded, outcome: .success, actor: call.agent, subject: "call:\(call.id.uuidString.lowercased())",
                    details: call.endedDetails(.abandoned, at: now)), at: now, on: tx)
            }
        }
        try await history.purge(now: now, on: db)
        try await Calls().purge(now: now, fingerprintWindow: history.window, on: db)
        try await callbacks.purge(now: now, on: db)
    }
}

extension Callbacks {
    /// Deletes the contact data past the retention time, each entry audited as expired.
    func expire(now: Date, auditedIn audit: AuditLog, on db: any Database) async throws {
        for id in try await expire(now: now, on: db) {
            try await audit.append(AuditEvent(
                action: .hotlineCallbackExpired, outcome: .success, subject: "callback:\(id.uuidString.lowercased())",
                details: ["reason": "retention"]), at: now, on: db)
        }
    }
}

extension AuditAction {
    static let hotlineCallStarted: AuditAction = "hotline.call.started"
    static let hotlineChecksAnswered: AuditAction = "hotline.call.checks"
    static let hotlineCallEnded: AuditAction = "hotline.call.ended"
    static let hotlineCallbackQueued: AuditAction = "hotline.callback.queued"
    static let hotlineCallbackTaken: AuditAction = "hotline.callback.taken"
    static let hotlineCallbackAttempt: AuditAction = "hotline.callback.attempt"
    static let hotlineCallbackExpired: AuditAction = "hotline.callback.expired"
    static let hotlineReadBack: AuditAction = "hotline.readback"
}
