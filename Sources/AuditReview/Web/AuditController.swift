import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PortalWeb
import Storage

/// `/admin/audit`: search with keyset paging, one entry in full, the teleTAN lookup and the chain
/// check. Every page an admin opens here is itself an audit entry.
struct AuditController: Sendable {
    let database: PortalDatabase
    let search: AuditSearch
    let lookup: TeleTANLookup
    let screen: TeleTANScreen
    let integrity: AuditIntegrity
    /// "Check everything" runs here, not in the request.
    let fullCheck: BackgroundCheck
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/admin/audit", access: .permission(.reviewAuditTrail))
            .get(use: searchPage)
            .get("entries/{seq}", use: entry)
            .post("lookup", form: LookupForm.self, use: lookUp)
            .get("teletans/{fingerprint}", use: teleTAN)
            .post("verify", form: VerifyForm.self, use: verify)
    }

    struct LookupForm: PortalForm {
        let teletan: String?
    }

    struct VerifyForm: PortalForm {
        let scope: String?
    }

    @Sendable func searchPage(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let query = try SearchQuery.read(request, timeZone: renderer.timeZone)
        let db = database.database(logger: context.logger)
        // Before anything is recorded: an issued teleTAN in Actor goes the way of the others.
        let parsed = try await screen.screen(query.parsed, on: db)
        var (filter, invalid, teleTANFields) = (parsed.filter, parsed.invalid, parsed.teleTANFields)
        if !filter.showOwnViews { filter.hiddenViewer = acting.username }
        let usable = invalid.isEmpty && teleTANFields.isEmpty
        let page = usable ? try await search.page(filter, at: query.cursor, on: db) : AuditPage(entries: [], older: nil, newer: nil)
        var details = Self.filterDetails(filter, cursor: query.cursor)
        if !teleTANFields.isEmpty { details["teletan_typed_in"] = teleTANFields.joined(separator: ",") }
        // The teleTAN's fingerprint, as a lookup records it: the teleTAN's page then lists this
        // search too, and the teleTAN itself is nowhere.
        var subject: String? = nil
        if let typed = parsed.typedTeleTAN { subject = try await screen.fingerprint(of: typed, on: db) }
        try await audit.appendView("search", of: request, by: acting, subject: subject, details: details, at: now(), on: db)
        let notice = renderer.notice(request, parameter: "verified", allowed: ["done", "started", "running"], prefix: "audit_verify_", in: context.language)
        return try await render(
            filter: filter, invalid: invalid, teleTANFields: teleTANFields, page: page, cursor: query.cursor, lookupError: nil,
            verifyNotice: notice, status: usable ? .ok : .badRequest, context: context)
    }

    @Sendable func entry(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        guard let seq = context.parameters.get("seq").flatMap(Int64.init), seq > 0 else { throw HTTPError(.notFound) }
        let db = database.database(logger: context.logger)
        guard let row = try await search.entry(seq, on: db) else { throw HTTPError(.notFound) }
        try await audit.appendView("entry", of: request, by: acting, details: ["seq": String(seq)], at: now(), on: db)
        return try renderer.page(EntryPage(row: row, renderer: renderer, language: context.language
        ), context: context)
    }

    /// A POST, so the typed teleTAN never reaches a URL, a log line or the browser's history; the
    /// answer is a redirect to the page of its fingerprint.
    @Sendable func lookUp(_ request: Request, context: PermittedContext, form: LookupForm) async throws -> Response {
        let acting = context.acting
        let db = database.database(logger: context.logger)
        guard let fingerprint = try await lookup.fingerprint(of: form.teletan ?? "", on: db) else {
            try await audit.append(AuditEvent(.auditLookup, .failure, by: acting, details: ["reason": "not_a_teletan"]), at: now(), on: db)
            var unfiltered = AuditFilter()
            unfiltered.hiddenViewer = acting.username
            return try await render(
                filter: AuditFilter(), invalid: [], teleTANFields: [], page: try await search.page(unfiltered, at: .newest, on: db), cursor: .newest,
                lookupError: renderer.text("audit_lookup_invalid", in: context.language), verifyNotice: nil,
                status: .unprocessableContent, context: context)
        }
        try await audit.append(AuditEvent(.auditLookup, .success, by: acting, subject: fingerprint), at: now(), on: db)
        return PageRenderer.redirect(to: "/admin/audit/teletans/\(fingerprint)")
    }

    @Sendable func teleTAN(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        guard let fingerprint = context.parameters.get("fingerprint"), TeleTANLookup.isFingerprint(fingerprint) else {
            throw HTTPError(.notFound)
        }
        let db = database.database(logger: context.logger)
        let time = now()
        let finding = try await lookup.find(fingerprint: fingerprint, now: time, on: db)
        try await audit.appendView(
            "teletan", of: request, by: acting, subject: fingerprint, details: ["found": finding.issuance == nil ? "no" : "yes"],
            at: time, on: db)
        return try renderer.page(TeleTANPage(finding: finding, fingerprint: fingerprint, renderer: renderer, language: context.language
        ), context: context)
    }

    @Sendable func verify(_ request: Request, context: PermittedContext, form: VerifyForm) async throws -> Response {
        let acting = context.acting
        let db = database.database(logger: context.logger)
        guard form.scope == "full" else {
            try await check(full: false, by: acting, on: db)
            return PageRenderer.redirect(to: "/admin/audit?verified=done#integrity")
        }
        let started = fullCheck.start { [self] in
            do {
                try await check(full: true, by: acting, on: db)
            } catch {
                acting.logger.error("the full audit check failed: \(String(describing: error))")
            }
        }
        return PageRenderer.redirect(to: "/admin/audit?verified=\(started ? "started" : "running")#integrity")
    }

    /// Checks the chain, records the result (the page shows it) and audits who asked.
    private func check(full: Bool, by acting: ActingUser, on db: any Database) async throws {
        let result = try await integrity.verify(full: full, now: now(), on: db)
        var details = ["scope": full ? "full" : "incremental", "checked": String(result.checkedEntries)]
        details["first_bad_seq"] = result.firstBrokenSeq.map(String.init)
        try await audit.append(AuditEvent(.auditVerify, result.isIntact ? .success : .failure, by: acting, details: details), at: now(), on: db)
    }

    // MARK: - Rendering

    private func render(
        filter: AuditFilter, invalid: [String], teleTANFields: [String], page: AuditPage, cursor: AuditCursor, lookupError: String?,
        verifyNotice: String?,
        status: HTTPResponse.Status, context: PermittedContext
    ) async throws -> Response {
        let db = database.database(logger: context.logger)
        let integrity = IntegrityBox(
            lastRun: try await self.integrity.lastVerification(on: db), lastFull: try await self.integrity.lastFullVerification(on: db),
            checkpoint: try await self.integrity.latestCheckpoint(on: db), renderer: renderer, language: context.language)
        let model = SearchPage(
            filter: filter, invalid: invalid, teleTANFields: teleTANFields, page: page, cursor: cursor, lookupError: lookupError,
            integrity: integrity, verifyNotice: verifyNotice, renderer: renderer, language: context.language)
        return try renderer.page(model, status: status, context: context)
    }

    /// What an audit entry about viewing or exporting says of the search: the filter as the URL
    /// had it (staff names, addresses, fingerprints; a teleTAN was taken out when parsing) and
    /// where the page started.
    static func filterDetails(_ filter: AuditFilter, cursor: AuditCursor = .newest) -> [String: String] {
        var details: [String: String] = [:]
        if !filter.isEmpty { details["filter"] = filter.queryString }
        switch cursor {
        case .newest: break
        case .before(let seq): details["before"] = String(seq)
        case .after(let seq): details["after"] = String(seq)
        }
        return details
    }

    /// Suggestions for the Action field (any other text is searched for as typed).
    static let knownActions = [
        "signin", "signout", "session.expired", "access.denied", "teletan.issue", "teletan.expired_unshown", "teletan.revoke",
        "event.approval.requested", "event.approval.given", "event.approval.declined",
        "hotline.call.started", "hotline.call.checks", "hotline.call.ended", "hotline.callback.queued", "hotline.callback.taken",
        "hotline.callback.attempt", "hotline.callback.expired", "hotline.readback",
        "audit.view", "audit.lookup", "audit.export", "audit.verify", "audit.checkpoint", "audit.retention",
        "admin.session.end", "admin.lockout.lift",
    ]
}

extension PageRenderer {
    /// The text of `key`, or `fallback` when the tables have none (an outcome, role or detail
    /// key some later feature writes).
    func label(_ key: String, or fallback: String, in language: Language) -> String {
        let text = text(key, in: language)
        return text.isEmpty ? fallback : text
    }
}

extension AuditAction {
    static let auditView: AuditAction = "audit.view"
    static let auditLookup: AuditAction = "audit.lookup"
    static let auditExport: AuditAction = "audit.export"
    static let auditVerify: AuditAction = "audit.verify"
    static let adminSessionEnd: AuditAction = "admin.session.end"
    static let adminLockoutLift: AuditAction = "admin.lockout.lift"
}
