import Audit
import PortalWeb

extension EntryPage {
    /// Every field of the entry `row`, with links to the entries of the same actor or subject and
    /// to its neighbours.
    init(row: AuditRow, renderer: PageRenderer, language: Language) {
        func link(_ name: String, _ value: String?) -> String? {
            value.map { "/admin/audit?\(name)=\(AuditFilter.encode($0))" }
        }
        self.init(
            entry: EntryItem(row, renderer: renderer, language: language),
            requestID: row.request_id, subject: row.subject,
            details: row.detailValues.sorted { $0.key < $1.key }.map {
                Detail(key: renderer.label("audit_detail_\($0.key)", or: $0.key, in: language),
                       value: renderer.auditDetailValue($0.value, in: language))
            },
            previousHash: row.prev_hash, hash: row.hash,
            actorLink: link("actor", row.actor), subjectLink: link("subject", row.subject),
            teleTANLink: row.subject.flatMap { TeleTANLookup.isFingerprint($0) ? "/admin/audit/teletans/\($0)" : nil },
            previousLink: row.seq > 1 ? "/admin/audit/entries/\(row.seq - 1)" : nil,
            nextLink: "/admin/audit/entries/\(row.seq + 1)")
    }
}
