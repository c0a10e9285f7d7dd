import Foundation
import PortalWeb

extension RevokePage {
    /// The confirmation for `row`, with the reason chosen and the note typed so far and what is
    /// wrong with them; `calls` holds the summary of the call it was issued in, if any.
    init(
        row: IssuedTeleTANs.Row, reason: RevocationReason.Code?, note: String, problem: Problem?, calls: [UUID: CallSummary],
        renderer: PageRenderer, language: Language
    ) {
        let error: String? = switch problem {
        case .reason: renderer.text("revoke_error_reason", in: language)
        case .note(let problem):
            renderer.text("revoke_error_note_\(problem.rawValue)", in: language, ["max": String(ShortText.maximumLength)])
        case nil: nil
        }
        self.init(
            id: row.id.uuidString.lowercased(), reference: IssuedTeleTANs.reference(row.id), type: row.type,
            healthAuthority: row.health_authority, issuedAt: renderer.dateTime(row.issued_at, in: language),
            call: RecentPage.Call(of: row, calls, renderer: renderer, in: language),
            reasons: RevocationReason.Code.allCases.map {
                Reason(code: $0.rawValue, label: renderer.text("revoke_reason_\($0.rawValue)", in: language), checked: $0 == reason)
            },
            note: note, maxNote: ShortText.maximumLength, problem: problem, error: error)
    }
}
