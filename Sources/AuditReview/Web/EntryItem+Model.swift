import Audit
import PortalWeb

extension EntryItem {
    /// An entry of the trail as a row of the results, in the page's language.
    init(_ row: AuditRow, renderer: PageRenderer, language: Language) {
        let details = row.detailValues.sorted { $0.key < $1.key }
        self.init(
            seq: String(row.seq), time: renderer.auditTime(row.occurred_at, in: language),
            timeISO: AuditTime.iso8601(milliseconds: row.milliseconds),
            actor: row.actor, action: row.action, outcome: row.outcome,
            outcomeLabel: renderer.label("audit_outcome_\(row.outcome)", or: row.outcome, in: language),
            roleLabel: row.role.map { renderer.label("role_\($0)", or: $0, in: language) },
            address: row.address,
            subjectShort: row.subject.map { $0.count > 16 ? "\($0.prefix(12))…" : $0 },
            details: details.map { "\(renderer.label("audit_detail_\($0.key)", or: $0.key, in: language))=\(renderer.auditDetailValue($0.value, in: language))" }
                .joined(separator: ", "),
            rawDetails: details.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
    }
}
