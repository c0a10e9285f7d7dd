import Foundation
import PortalWeb

extension PageRenderer {
    /// An audit time to the second in the authority's time zone, with two digits for hour, minute
    /// and second always ("24 Nov 2026, 13:41:04 CET"): the trail is read to the second, and
    /// `13:41:4` is misread. Every time on a row is shown this way, in the one zone.
    func auditTime(_ date: Date, in language: Language) -> String {
        let locale = Locale(identifier: language.locale)
        var day = Date.FormatStyle.dateTime.day().month(.abbreviated).year().locale(locale)
        day.timeZone = timeZone
        var zone = Date.FormatStyle().timeZone(.specificName(.short)).locale(locale)
        zone.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
        let clock = String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        return "\(date.formatted(day)), \(clock) \(date.formatted(zone))"
    }

    /// A detail's value as the row shows it: a time (ISO 8601, as entries store it in UTC) in
    /// the authority's zone like the row's own time, anything else as it is.
    func auditDetailValue(_ value: String, in language: Language) -> String {
        guard value.count >= 20, value.first?.isNumber == true, let date = try? Date(value, strategy: .iso8601) else { return value }
        return auditTime(date, in: language)
    }
}
