import Foundation
import Logging

/// Keeps the messages logged through its loggers, so a test can check that a warning was given
/// (and that a secret was not).
package final class LogRecorder: @unchecked Sendable {
    package struct Line: Sendable {
        package let level: Logger.Level
        package let message: String
        package let metadata: [String: String]
    }

    private let lock = NSLock()
    private var recorded: [Line] = []

    package init() {}

    package var lines: [Line] { lock.withLock { recorded } }

    package func logger(level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "recorded") { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) {
        lock.withLock { recorded.append(line) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?,
                 source: String, file: String, function: String, line: UInt) {
            let merged = metadata.merging(explicit ?? [:]) { $1 }
            recorder.append(Line(level: level, message: message.description, metadata: merged.mapValues { "\($0)" }))
        }
    }
}
