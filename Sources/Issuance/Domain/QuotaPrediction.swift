import Foundation

/// How the daily quota is set (`--daily-quota`, `--daily-quota-minimum`, `--daily-quota-maximum`,
/// `--daily-quota-factor`; docs/configuration.md).
package struct DailyQuotaSettings: Sendable, Equatable {
    /// The quota of a scope (the portal, a health authority) with fewer than
    /// ``QuotaPrediction/minimumDays`` days of its own history.
    package var fixed = 1000
    /// The bounds of the predicted number of teleTANs, before the factor.
    package var minimum = 10
    package var maximum = 20000
    /// The factor on the prediction in hundredths (125: 1.25), so that the quota is exact
    /// integer arithmetic: 10 × 1.1 is 11, not 11.000000000000002 rounded up to 12.
    package var factorPercent = 125

    package init() {}
}

/// A scope's quota for one day, predicted from its own history as Google's verification server
/// does (ENVS, pkg/controller/modeler): a least-squares line through the issued counts of the
/// last complete days, its value for the day, rounded, clamped to [minimum, maximum], times
/// the factor, rounded up. With fewer than ``minimumDays`` days of history, the fixed quota.
package struct QuotaPrediction: Sendable, Equatable {
    /// One complete day of history: its date in the authority's time zone, and what was issued.
    package struct Day: Sendable, Equatable, Codable {
        package let day: QuotaDay
        package let issued: Int

        package init(day: QuotaDay, issued: Int) {
            self.day = day
            self.issued = issued
        }
    }

    package static let minimumDays = 14
    /// The history looked at: the complete days up to this many days back.
    package static let maximumDays = 21

    /// The day's quota (before any raise by an administrator).
    package let quota: Int
    /// The line's value, rounded and clamped, before the factor; nil for the fixed quota.
    package let predicted: Int?
    /// The days it was predicted from, oldest first (empty for the fixed quota).
    package let basis: [Day]

    package init(quota: Int, predicted: Int?, basis: [Day]) {
        self.quota = quota
        self.predicted = predicted
        self.basis = basis
    }

    /// The quota of `day` from `history` (any days; only complete days within ``maximumDays``
    /// before `day` count).
    package static func make(for day: QuotaDay, history: [Day], settings: DailyQuotaSettings) -> QuotaPrediction {
        let window = (day.number - maximumDays)..<day.number
        let days = history.filter { window.contains($0.day.number) }.sorted { $0.day.number < $1.day.number }
        guard days.count >= minimumDays else { return QuotaPrediction(quota: settings.fixed, predicted: nil, basis: []) }
        let line = leastSquaresValue(at: Double(day.number), of: days.map { (Double($0.day.number), Double($0.issued)) })
        let predicted = min(settings.maximum, max(settings.minimum, Int(line.rounded(.toNearestOrAwayFromZero))))
        let quota = (predicted * settings.factorPercent + 99) / 100
        return QuotaPrediction(quota: quota, predicted: predicted, basis: days)
    }

    /// The value at `x` of the least-squares line through `points` (at least two distinct x).
    static func leastSquaresValue(at x: Double, of points: [(x: Double, y: Double)]) -> Double {
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        let sxx = points.reduce(0) { $0 + ($1.x - meanX) * ($1.x - meanX) }
        let sxy = points.reduce(0) { $0 + ($1.x - meanX) * ($1.y - meanY) }
        let slope = sxx > 0 ? sxy / sxx : 0
        return meanY + slope * (x - meanX)
    }
}

/// A calendar day in the authority's time zone (`--time-zone`): the quota's day, which ends at
/// the authority's midnight.
package struct QuotaDay: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    package let number: Int

    package init(number: Int) {
        self.number = number
    }

    /// The day `date` falls on in `timeZone`.
    package init(_ date: Date, in timeZone: TimeZone) {
        let local = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        number = Int((local / 86_400).rounded(.down))
    }

    /// "2026-11-27", how the database stores the day.
    package init?(text: String) {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, let date = Self.calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else {
            return nil
        }
        number = Int(date.timeIntervalSince1970 / 86_400)
    }

    package var text: String {
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(number) * 86_400))
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    package var description: String { text }

    package func adding(days: Int) -> QuotaDay { QuotaDay(number: number + days) }

    /// The next midnight in `timeZone` (the quota's reset), as a moment.
    package func end(in timeZone: TimeZone) -> Date {
        let localMidnight = Double(number + 1) * 86_400
        // The offset at midnight itself (a change of summer time happens at 2 or 3 o'clock).
        let guess = Date(timeIntervalSince1970: localMidnight - Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: localMidnight))))
        return Date(timeIntervalSince1970: localMidnight - Double(timeZone.secondsFromGMT(for: guess)))
    }

    package static func < (lhs: QuotaDay, rhs: QuotaDay) -> Bool { lhs.number < rhs.number }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let day = QuotaDay(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a day"))
        }
        self = day
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
