/// A wait or a display time as people read it: "30 seconds", "1 minute", "24 hours"; in German
/// "30 Sekunden", "1 Minute", "24 Stunden" (the forms after "in" and "nach"). Under two minutes in
/// seconds, under two hours in minutes, else in hours, always rounded up (never "0 minutes").
package enum DurationText {
    package static func text(seconds: Int, in language: Language) -> String {
        let seconds = max(1, seconds)
        let (count, unit): (Int, Unit) =
            seconds < 120 ? (seconds, .second)
            : seconds < 7200 ? ((seconds + 59) / 60, .minute)
            : ((seconds + 3599) / 3600, .hour)
        return "\(count) \(unit.name(plural: count != 1, in: language))"
    }

    /// A configured limit after "after" or "nach", exact and with one spelled out: "one hour",
    /// "90 minutes"; in German the dative "einer Stunde", "90 Minuten" (every unit is feminine,
    /// so "einer" fits all three).
    package static func limit(seconds: Int, in language: Language) -> String {
        let seconds = max(1, seconds)
        let (count, unit): (Int, Unit) =
            seconds % 3600 == 0 ? (seconds / 3600, .hour)
            : seconds % 60 == 0 ? (seconds / 60, .minute)
            : (seconds, .second)
        let number = count != 1 ? String(count) : language == .german ? "einer" : "one"
        return "\(number) \(unit.name(plural: count != 1, in: language))"
    }

    private enum Unit {
        case second, minute, hour

        func name(plural: Bool, in language: Language) -> String {
            switch (self, language) {
            case (.second, .german): plural ? "Sekunden" : "Sekunde"
            case (.minute, .german): plural ? "Minuten" : "Minute"
            case (.hour, .german): plural ? "Stunden" : "Stunde"
            case (.second, _): plural ? "seconds" : "second"
            case (.minute, _): plural ? "minutes" : "minute"
            case (.hour, _): plural ? "hours" : "hour"
            }
        }
    }
}
