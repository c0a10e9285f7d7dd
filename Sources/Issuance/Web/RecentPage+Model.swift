import Foundation
import PortalWeb
import Verification

extension RecentPage {
    /// The page from what the user issued in the last seven days, the statuses the verification
    /// service told (nil: it could not), and the summaries of the hotline calls they belong to.
    init(
        rows: [IssuedTeleTANs.Row], statuses: [String: TeleTANStatus]?, calls: [UUID: CallSummary], notice: String?,
        renderer: PageRenderer, language: Language
    ) {
        items = rows.map { row in
            let status: TeleTANStatus? = row.revoked_at != nil ? .revoked : row.reference.flatMap { statuses?[$0] }
            return Item(
                id: row.id.uuidString.lowercased(),
                reference: IssuedTeleTANs.reference(row.id),
                type: row.type,
                healthAuthority: row.health_authority,
                issuedAt: renderer.dateTime(row.issued_at, in: language),
                validUntil: renderer.dateTime(row.valid_until, in: language),
                status: renderer.text("recent_status_\(status?.rawValue ?? "unknown")", in: language),
                statusKey: status?.rawValue ?? "unknown",
                revokeReason: Self.revokeReason(of: row, renderer: renderer, in: language),
                call: Call(of: row, calls, renderer: renderer, in: language),
                mayRevoke: status == .unused)
        }
        self.notice = notice
        statusUnknown = !rows.isEmpty && (statuses == nil || rows.compactMap(\.reference).count < rows.count)
    }

    private static func revokeReason(of row: IssuedTeleTANs.Row, renderer: PageRenderer, in language: Language) -> String? {
        guard let code = row.revoke_reason.flatMap(RevocationReason.Code.init(rawValue:)) else { return nil }
        let label = renderer.text("revoke_reason_\(code.rawValue)", in: language)
        return row.revoke_note.map { "\(label): \($0)" } ?? label
    }
}

extension RecentPage.Call {
    /// The call `row` was issued in; nil for a teleTAN issued outside a call.
    init?(of row: IssuedTeleTANs.Row, _ summaries: [UUID: CallSummary], renderer: PageRenderer, in language: Language) {
        guard let id = row.call_id.flatMap(UUID.init(uuidString:)) else { return nil }
        let summary = summaries[id]
        let outcome = summary.map { renderer.text($0.outcomeKey, in: language) } ?? ""
        self.init(
            id: id.uuidString.lowercased(),
            startedAt: summary.map { renderer.dateTime($0.startedAt, in: language) },
            outcome: outcome.isEmpty ? nil : outcome)
    }
}
