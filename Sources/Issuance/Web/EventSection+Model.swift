import Foundation
import PortalWeb

extension EventSection {
    /// The notices a redirect may ask the section for (`/?event=…`).
    static let notices: Set<String> = [
        "requested", "approved", "declined", "not_pending", "not_approved", "unknown_authority", "withdrawn", "already_issued",
    ]

    /// The start page's section: the issuing form (`directNonce`, nil under the four-eyes rule
    /// or while a teleTAN waits), or the request form with the viewer's own requests and those
    /// awaiting their decision. `makeNonce` gives the issuing form of each approved own request
    /// its one-use token (none while a teleTAN waits).
    init(
        authorities: HealthAuthorities, twoPerson: Bool, directNonce: String?, own: [EventRequests.Row], toApprove: [EventRequests.Row],
        waitingCount: Int, teleTANWaiting: Bool, makeNonce: () -> String, notice: String?, at time: Date,
        renderer: PageRenderer, language: Language
    ) {
        func name(of id: String) -> String { authorities.find(id).map { "\($0.name) (\($0.id))" } ?? id }
        self.init(
            authorities: authorities.all.map { Authority(id: $0.id, name: $0.name, selected: false) },
            reasonValue: "", reasonError: nil, directNonce: directNonce, twoPerson: twoPerson,
            ownRequests: own.map { row in
                let state = row.shownState(at: time)
                return Request(
                    id: row.id.uuidString.lowercased(), requestedBy: row.requested_by, authority: name(of: row.health_authority),
                    requestedAt: renderer.dateTime(row.requested_at, in: language), reason: row.reason ?? "",
                    status: renderer.text("event_status_\(state.rawValue)", in: language, ["by": row.decided_by ?? ""]),
                    approvedNonce: row.isUsableApproval(at: time) && !teleTANWaiting ? makeNonce() : nil,
                    mayWithdraw: state == .pending || state == .approved)
            },
            toApprove: toApprove.map { row in
                Request(
                    id: row.id.uuidString.lowercased(), requestedBy: row.requested_by, authority: name(of: row.health_authority),
                    requestedAt: renderer.dateTime(row.requested_at, in: language), reason: row.reason ?? "", status: "",
                    approvedNonce: nil, mayWithdraw: false)
            },
            waitingForApproval: renderer.text(
                waitingCount == 0 ? "event_waiting_none" : waitingCount == 1 ? "event_waiting_one" : "event_waiting_many", in: language,
                ["count": String(waitingCount)]),
            // The requester learns on their start page that a request of theirs may now be issued.
            approvedOwn: own.filter { $0.isUsableApproval(at: time) }.map { row in
                renderer.text("event_own_approved", in: language, [
                    "authority": name(of: row.health_authority), "by": row.decided_by ?? "",
                    "until": renderer.dateTime((row.decided_at ?? time).addingTimeInterval(EventRequests.approvedFor), in: language),
                ])
            },
            notice: notice.flatMap { Self.notices.contains($0) ? renderer.text("event_notice_\($0)", in: language) : nil })
    }

    /// The request form again after a refused reason: the authority chosen, the reason as typed
    /// and what is wrong with it.
    init(refused problem: ShortText.Problem, reason: String, authority: HealthAuthority, of authorities: HealthAuthorities,
         renderer: PageRenderer, language: Language) {
        self.init(
            authorities: authorities.all.map { Authority(id: $0.id, name: $0.name, selected: $0.id == authority.id) },
            reasonValue: reason,
            reasonError: renderer.text("event_reason_error_\(problem.rawValue)", in: language, ["max": String(ShortText.maximumLength)]),
            directNonce: nil, twoPerson: true, ownRequests: [], toApprove: [], waitingForApproval: "", approvedOwn: [], notice: nil)
    }
}
