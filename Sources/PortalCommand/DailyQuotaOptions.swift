import ArgumentParser
import CommandSupport
import Issuance

/// `--daily-quota` and the bounds and factor of its prediction, for `serve` and `check-config`
/// (docs/configuration.md, "Daily quota").
struct DailyQuotaOptions: ParsableArguments {
    @Option(help: "teleTANs a day for the whole portal, and EVENT teleTANs a day for each health authority, until it has 14 days of history to predict from (env PORTAL_DAILY_QUOTA)")
    var dailyQuota: String = Environment.value("PORTAL_DAILY_QUOTA") ?? "1000"
    @Option(help: "Lowest predicted daily quota, before the factor (env PORTAL_DAILY_QUOTA_MINIMUM)")
    var dailyQuotaMinimum: String = Environment.value("PORTAL_DAILY_QUOTA_MINIMUM") ?? "10"
    @Option(help: "Highest predicted daily quota, before the factor (env PORTAL_DAILY_QUOTA_MAXIMUM)")
    var dailyQuotaMaximum: String = Environment.value("PORTAL_DAILY_QUOTA_MAXIMUM") ?? "20000"
    @Option(help: "The predicted daily quota times this, rounded up; 1 to 10, at most two decimals (env PORTAL_DAILY_QUOTA_FACTOR)")
    var dailyQuotaFactor: String = Environment.value("PORTAL_DAILY_QUOTA_FACTOR") ?? "1.25"

    static let largest = 10_000_000

    /// The settings; every value that cannot be used is recorded in `problems`.
    func settings(problems: ConfigurationProblems) -> DailyQuotaSettings {
        var settings = DailyQuotaSettings()
        problems.set(&settings.fixed) {
            try OptionParser.integer(dailyQuota, flag: "--daily-quota", env: "PORTAL_DAILY_QUOTA", range: 1...Self.largest)
        }
        problems.set(&settings.minimum) {
            try OptionParser.integer(dailyQuotaMinimum, flag: "--daily-quota-minimum", env: "PORTAL_DAILY_QUOTA_MINIMUM", range: 1...Self.largest)
        }
        problems.set(&settings.maximum) {
            try OptionParser.integer(dailyQuotaMaximum, flag: "--daily-quota-maximum", env: "PORTAL_DAILY_QUOTA_MAXIMUM", range: 1...Self.largest)
        }
        if settings.minimum > settings.maximum {
            problems.add("--daily-quota-minimum (PORTAL_DAILY_QUOTA_MINIMUM): \(settings.minimum) is above --daily-quota-maximum (\(settings.maximum))")
        }
        problems.set(&settings.factorPercent) {
            guard let percent = Self.percent(dailyQuotaFactor), (100...1000).contains(percent) else {
                throw ConfigurationError(message: "--daily-quota-factor (PORTAL_DAILY_QUOTA_FACTOR): expected a number from 1 to 10 with at most two decimals such as 1.25, got '\(dailyQuotaFactor)'")
            }
            return percent
        }
        return settings
    }

    /// "1.25" as 125; nil for anything but digits with at most two decimals.
    static func percent(_ text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 6 && $0.allSatisfy(\.isASCII) }),
              let whole = Int(parts[0]), whole >= 0 else { return nil }
        guard parts.count == 2 else { return whole * 100 }
        guard parts[1].count <= 2, let fraction = Int(parts[1]), fraction >= 0 else { return nil }
        return whole * 100 + (parts[1].count == 1 ? fraction * 10 : fraction)
    }
}
