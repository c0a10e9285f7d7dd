import Foundation
import Logging
import Storage

/// Reads `PORTAL_*` environment variables as option defaults: every flag has one.
package enum Environment {
    package static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    package static func flag(_ name: String) -> Bool {
        guard let value = value(name)?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(value)
    }
}

/// Parses option values and reports problems as "--flag (ENV): what was expected".
package enum OptionParser {
    package static func integer(_ text: String, flag: String, env: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ConfigurationError(message: "\(flag) (\(env)): expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// `90`, `90s`, `15m`, `8h` or `2d`; `0s` only where `allowZero` (a limit switched off).
    package static func duration(
        _ text: String, flag: String, env: String, allowZero: Bool = false, maximumDays: Int64 = 366
    ) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = trimmed, multiplier: Int64 = 1
        if let last = trimmed.last, let unit = units[last] {
            number = String(trimmed.dropLast())
            multiplier = unit
        }
        guard let value = Int64(number), value > 0 || (allowZero && value == 0), value <= maximumDays * 86400 / multiplier else {
            throw ConfigurationError(message: "\(flag) (\(env)): expected a duration such as 30s, 15m or 8h, got '\(text)'")
        }
        return .seconds(value * multiplier)
    }

    package static func database(_ text: String, env: String) throws -> DatabaseLocation {
        do {
            return try DatabaseLocation(parsing: text)
        } catch let error as DatabaseLocation.ParseError {
            throw ConfigurationError(message: "--database (\(env)): \(error.description)")
        }
    }

    /// Logs to standard output at `level` (journald adds the time when run under systemd).
    package static func logger(label: String, level text: String, env: String) throws -> Logger {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ConfigurationError(message: "--log-level (\(env)): expected trace, debug, info, notice, warning or error, got '\(text)'")
        }
        LoggingSystem.bootstrap(DeferredMetadataLogHandler.init)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// A JWT audience (`aud`): up to 200 printable characters without spaces, e.g. a name or a URL.
    package static func audience(_ text: String, flag: String, env: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard (1...200).contains(trimmed.count),
              trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !$0.properties.isWhitespace && $0.properties.generalCategory != .control })
        else {
            throw ConfigurationError(message: "\(flag) (\(env)): expected a name of 1 to 200 characters without spaces, such as a URL, got '\(text)'")
        }
        return trimmed
    }

    package static func name(_ text: String, flag: String, env: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw ConfigurationError(message: "\(flag) (\(env)): expected a name without spaces or slashes, got '\(text)'")
        }
        return trimmed
    }
}
