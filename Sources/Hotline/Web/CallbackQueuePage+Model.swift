import Foundation
import PortalWeb

extension CallbackQueuePage {
    /// The notices the queue shows after a take or an outcome (`?notice=…`).
    static let notices: Set<String> = [
        "taken_by_other", "not_waiting", "not_taken", "no_answer", "reached", "wrong_number", "refused", "unreachable",
    ]

    /// A waiting callback as `agent` sees it in the queue (the number masked).
    struct Waiting {
        let row: Callbacks.Row
        let phone: PhoneNumber
        /// "This number received a teleTAN 3 days ago."
        let repeatWarning: String?
    }

    /// The queue for `agent`: the waiting callbacks and those closed recently.
    init(
        waiting: [Waiting], closed: [Callbacks.Row], notice: String?, agent: String, callbacks: Callbacks, now time: Date,
        renderer: PageRenderer, language: Language
    ) {
        self.init(
            intro: renderer.text("hotline_queue_intro", in: language, [
                "retention": DurationText.limit(seconds: Int(callbacks.retention), in: language)]),
            entries: waiting.map { entry in
                let row = entry.row
                let holder = row.holder(now: time, takeTimeout: callbacks.takeTimeout)
                return Entry(
                    id: row.id.uuidString.lowercased(), maskedNumber: entry.phone.masked,
                    waitingSince: renderer.dateTime(row.created_at, in: language),
                    attempts: renderer.text("hotline_attempts", in: language, ["count": String(row.attempts), "max": String(callbacks.maximumAttempts)]),
                    takenBy: holder.flatMap { $0 == agent ? nil : $0 }, mine: holder == agent, mayTake: holder == nil,
                    repeatWarning: entry.repeatWarning)
            },
            closed: closed.map { row in
                Closed(
                    queuedAt: renderer.dateTime(row.created_at, in: language),
                    closedAt: renderer.dateTime(row.closed_at ?? time, in: language),
                    outcome: renderer.text("hotline_callback_closed_\(row.outcome ?? "expired")", in: language),
                    attempts: String(row.attempts))
            },
            notice: notice.flatMap { Self.notices.contains($0) ? renderer.text("hotline_queue_notice_\($0)", in: language) : nil })
    }
}
