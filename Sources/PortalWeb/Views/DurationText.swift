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
