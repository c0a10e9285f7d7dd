import FluentKit
import Foundation

/// The hotline's figures for staff and admins: counts only, never a name, number or teleTAN.
package struct HotlineOverview: Sendable {
    package struct Figures: Sendable, Equatable {
        /// Calls started today, by outcome (`open` for calls still going on).
        package var today: [String: Int]
        /// Calls started this week (from Monday), by outcome.
        package var week: [String: Int]
        package var callbacksWaiting: Int
        package var oldestWaitingSince: Date?
        /// teleTANs issued in hotline calls per day, the last 14 days, oldest first
        /// (`yyyy-MM-dd` in the authority's time zone).
        package var teleTANsPerDay: [(day: Date, count: Int)]

        package static func == (lhs: Figures, rhs: Figures) -> Bool {
            lhs.today == rhs.today && lhs.week == rhs.week && lhs.callbacksWaiting == rhs.callbacksWaiting
                && lhs.oldestWaitingSince == rhs.oldestWaitingSince
                && lhs.teleTANsPerDay.map(\.day) == rhs.teleTANsPerDay.map(\.day)
                && lhs.teleTANsPerDay.map(\.count) == rhs.teleTANsPerDay.map(\.count)
        }
    }

    let calls = Calls()
    let callbacks: Callbacks
    let timeZone: TimeZone

    package init(callbacks: Callbacks, timeZone: TimeZone) {
        self.callbacks = callbacks
        self.timeZone = timeZone
    }

    package func figures(now: Date, on db: any Database) async throws -> Figures {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        let today = calendar.startOfDay(for: now)
        let week = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? today
        let fortnight = calendar.date(byAdding: .day, value: -13, to: today) ?? today
        let rows = try await calls.started(since: min(week, fortnight), on: db)
        var figures = Figures(today: [:], week: [:], callbacksWaiting: 0, oldestWaitingSince: nil, teleTANsPerDay: [])
        for row in rows {
            let outcome = row.outcome ?? "open"
            if row.started_at >= today { figures.today[outcome, default: 0] += 1 }
            if row.started_at >= week { figures.week[outcome, default: 0] += 1 }
        }
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        var perDay: [String: Int] = [:]
        for row in rows {
            if let issued = row.teletan_issued_at, issued >= fortnight { perDay[formatter.string(from: issued), default: 0] += 1 }
        }
        figures.teleTANsPerDay = (0..<14).compactMap { calendar.date(byAdding: .day, value: $0, to: fortnight) }
            .map { ($0, perDay[formatter.string(from: $0)] ?? 0) }
        let waiting = try await callbacks.waitingCount(now: now, on: db)
        figures.callbacksWaiting = waiting.count
        figures.oldestWaitingSince = waiting.oldest
        return figures
    }
}
