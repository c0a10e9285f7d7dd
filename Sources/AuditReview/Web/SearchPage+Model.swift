import Audit
import PortalWeb

extension SearchPage {
    /// The search page for `filter` as it was read (`invalid` fields could not be read,
    /// `teleTANFields` held an issued teleTAN and were not searched) and the `page` of entries
    /// found from `cursor` on.
    init(
        filter: AuditFilter, invalid: [String], teleTANFields: [String], page: AuditPage, cursor: AuditCursor, lookupError: String?,
        integrity: IntegrityBox, verifyNotice: String?, renderer: PageRenderer, language: Language
    ) {
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
        self.init(
            form: Form(
                actor: filter.actor ?? "", action: filter.action ?? "", outcomes: outcomes,
                from: filter.fromText ?? "", to: filter.toText ?? "", address: filter.address ?? "",
                subject: filter.subjectText ?? filter.subject ?? "", showOwnViews: filter.showOwnViews,
                invalid: invalid, teleTANFields: teleTANFields),
            knownActions: AuditController.knownActions, filterError: errors.isEmpty ? nil : errors.joined(separator: " "),
            entries: page.entries.map { EntryItem($0, renderer: renderer, language: language) },
            filtered: !filter.isEmpty,
            olderLink: page.older.map { "\(base)before=\($0)" },
            newerLink: page.newer.map { "\(base)after=\($0)" },
            newestLink: cursor == .newest ? nil : String(base.dropLast()),
            csvLink: "/admin/audit/export.csv\(exportQuery)", jsonlLink: "/admin/audit/export.jsonl\(exportQuery)",
            lookupError: lookupError, integrity: integrity, verifyNotice: verifyNotice)
    }
}

extension IntegrityBox {
    /// The last run of the chain check, the newest full check beside it (unless that was the last
    /// run) and the newest signed checkpoint, nil for none yet.
    init(lastRun run: AuditVerification?, lastFull: AuditVerification?, checkpoint: AuditCheckpoint?, renderer: PageRenderer,
         language: Language) {
        func shown(_ run: AuditVerification) -> LastRun {
            let scopeKey = run.full ? "audit_verify_scope_full" : "audit_verify_scope_incremental"
            return LastRun(
                time: renderer.auditTime(run.verifiedAt, in: language), scope: renderer.text(scopeKey, in: language),
                range: renderer.text("audit_verify_range", in: language, [
                    "count": String(run.checkedEntries), "from": String(run.fromSeq), "to": String(run.toSeq)]),
                intact: run.isIntact, nothingYet: run.isIntact && run.checkedEntries == 0,
                brokenSeq: run.firstBrokenSeq.map(String.init), problem: run.problem)
        }
        self.init(
            lastRun: run.map(shown),
            checkpoint: checkpoint.map {
                Checkpoint(seq: String($0.seq), time: renderer.auditTime($0.signedAt, in: language), keyID: $0.keyID)
            },
            lastFull: run?.full == true ? nil : lastFull.map(shown))
    }
}
