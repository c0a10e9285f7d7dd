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
            .post("lookup", use: lookUp)
            .get("teletans/{fingerprint}", use: teleTAN)
            .post("verify", use: verify)
    }

    struct LookupForm: PortalForm {
        let csrf: String?
        let teletan: String?
    }

    struct VerifyForm: PortalForm {
        let csrf: String?
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
        func link(_ name: String, _ value: String?) -> String? {
            value.map { "/admin/audit?\(name)=\(AuditFilter.encode($0))" }
        }
        let details = row.detailValues.sorted { $0.key < $1.key }
        return try renderer.page(EntryPage(
            entry: EntryItem(row, renderer: renderer, language: context.language),
            requestID: row.request_id, subject: row.subject,
            details: details.map {
                .init(key: renderer.label("audit_detail_\($0.key)", or: $0.key, in: context.language),
                      value: renderer.auditDetailValue($0.value, in: context.language))
            }, hasDetails: !details.isEmpty,
            previousHash: row.prev_hash, hash: row.hash,
            actorLink: link("actor", row.actor), subjectLink: link("subject", row.subject),
            teleTANLink: row.subject.flatMap { TeleTANLookup.isFingerprint($0) ? "/admin/audit/teletans/\($0)" : nil },
            previousLink: row.seq > 1 ? "/admin/audit/entries/\(row.seq - 1)" : nil,
            nextLink: "/admin/audit/entries/\(row.seq + 1)"
        ), context: context)
    }

    /// A POST, so the typed teleTAN never reaches a URL, a log line or the browser's history; the
    /// answer is a redirect to the page of its fingerprint.
    @Sendable func lookUp(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let form = try await context.form(LookupForm.self, of: request)
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
        let language = context.language
        return try renderer.page(TeleTANPage(
            found: finding.issuance != nil,
            issuedAt: finding.issuance.map { renderer.auditTime($0.occurred_at, in: language) },
            issuedBy: finding.issuance?.actor,
            issuanceLink: finding.issuance.map { "/admin/audit/entries/\($0.seq)" },
            type: finding.issuanceDetails["type"],
            validUntil: finding.validUntil.map { renderer.dateTime($0, in: language) },
            status: renderer.text("audit_status_\(finding.status.rawValue)", in: language),
            statusKey: finding.status.rawValue,
            callLink: finding.callSubject.map { "/admin/audit?subject=\(AuditFilter.encode($0))" },
            entries: finding.entries.map { EntryItem($0, renderer: renderer, language: language) },
            subjectLink: "/admin/audit?subject=\(fingerprint)"
        ), context: context)
    }

    @Sendable func verify(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let form = try await context.form(VerifyForm.self, of: request)
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
        let language = context.language
        let db = database.database(logger: context.logger)
        let base = filter.isEmpty ? "/admin/audit?" : "/admin/audit?\(filter.queryString)&"
        let exportQuery = filter.isEmpty ? "" : "?\(filter.queryString)"
        let outcomes = [Option(value: "", label: renderer.text("audit_outcome_any", in: language), selected: filter.outcome == nil)]
            + AuditEvent.Outcome.allCases.map { outcome in
                Option(value: outcome.rawValue, label: renderer.text("audit_outcome_\(outcome.rawValue)", in: language), selected: filter.outcome == outcome)
            }
        func names(_ fields: [String]) -> String { fields.map { renderer.text("audit_field_\($0)", in: language) }.joined(separator: ", ") }
        var errors: [String] = []
        if !invalid.isEmpty { errors.append(renderer.text("audit_filter_invalid", in: language, ["fields": names(invalid)])) }
        if !teleTANFields.isEmpty { errors.append(renderer.text("audit_filter_teletan", in: language, ["fields": names(teleTANFields)])) }
        let filterError: String? = errors.isEmpty ? nil : errors.joined(separator: " ")
        let entries = page.entries.map { EntryItem($0, renderer: renderer, language: language) }
        let integrityBox = try await integrityBox(language: language, on: db)
        let model = SearchPage(
            formActor: filter.actor ?? "", formAction: filter.action ?? "", outcomes: outcomes,
            formFrom: filter.fromText ?? "", formTo: filter.toText ?? "", formAddress: filter.address ?? "", formSubject: filter.subjectText ?? filter.subject ?? "",
            showOwnViews: filter.showOwnViews,
            knownActions: Self.knownActions, filterError: filterError,
            invalidActor: invalid.contains("actor"), invalidAction: invalid.contains("action") || teleTANFields.contains("action"), invalidFrom: invalid.contains("from"),
            invalidTo: invalid.contains("to"), invalidAddress: invalid.contains("address") || teleTANFields.contains("address"),
            invalidSubject: invalid.contains("subject") || teleTANFields.contains("subject"),
            invalidOutcome: invalid.contains("outcome") || invalid.contains("own_views"),
            entries: entries, hasEntries: !entries.isEmpty, filtered: !filter.isEmpty,
            olderLink: page.older.map { "\(base)before=\($0)" },
            newerLink: page.newer.map { "\(base)after=\($0)" },
            newestLink: cursor == .newest ? nil : String(base.dropLast()),
            csvLink: "/admin/audit/export.csv\(exportQuery)", jsonlLink: "/admin/audit/export.jsonl\(exportQuery)",
            lookupError: lookupError, integrity: integrityBox, verifyNotice: verifyNotice)
        return try renderer.page(model, status: status, context: context)
    }

    private func integrityBox(language: Language, on db: any Database) async throws -> IntegrityBox {
        let lastRun = try await integrity.lastVerification(on: db).map { lastRunBox($0, language: language) }
        let checkpoint: IntegrityBox.Checkpoint? = try await integrity.latestCheckpoint(on: db).map {
            IntegrityBox.Checkpoint(seq: String($0.seq), time: renderer.auditTime($0.signedAt, in: language), keyID: $0.keyID)
        }
        return IntegrityBox(lastRun: lastRun, checkpoint: checkpoint)
    }

    private func lastRunBox(_ run: AuditVerification, language: Language) -> IntegrityBox.LastRun {
        let scopeKey = run.full ? "audit_verify_scope_full" : "audit_verify_scope_incremental"
        let range = renderer.text("audit_verify_range", in: language, [
            "count": String(run.checkedEntries), "from": String(run.fromSeq), "to": String(run.toSeq)])
        return IntegrityBox.LastRun(
            time: renderer.auditTime(run.verifiedAt, in: language), scope: renderer.text(scopeKey, in: language),
            range: range, intact: run.isIntact, nothingYet: run.isIntact && run.checkedEntries == 0, brokenSeq: run.firstBrokenSeq.map(String.init), problem: run.problem)
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

extension EntryItem {
    init(_ row: AuditRow, renderer: PageRenderer, language: Language) {
        let details = row.detailValues.sorted { $0.key < $1.key }
        self.init(
            seq: String(row.seq), time: renderer.auditTime(row.occurred_at, in: language),
            timeISO: AuditTime.iso8601(milliseconds: row.milliseconds),
            actor: row.actor, role: row.role, action: row.action, outcome: row.outcome,
            outcomeLabel: renderer.label("audit_outcome_\(row.outcome)", or: row.outcome, in: language),
            roleLabel: row.role.map { renderer.label("role_\($0)", or: $0, in: language) },
            address: row.address,
            subjectShort: row.subject.map { $0.count > 16 ? "\($0.prefix(12))…" : $0 },
            details: details.map { "\(renderer.label("audit_detail_\($0.key)", or: $0.key, in: language))=\(renderer.auditDetailValue($0.value, in: language))" }
                .joined(separator: ", "),
            rawDetails: details.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
    }
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
