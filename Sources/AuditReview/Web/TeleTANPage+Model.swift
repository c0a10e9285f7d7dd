import PortalWeb

extension TeleTANPage {
    /// What the lookup of the teleTAN with `fingerprint` found.
    init(finding: TeleTANLookup.Finding, fingerprint: String, renderer: PageRenderer, language: Language) {
        self.init(
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
            subjectLink: "/admin/audit?subject=\(fingerprint)")
    }
}
