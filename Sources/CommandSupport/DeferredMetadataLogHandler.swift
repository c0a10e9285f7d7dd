import Logging

/// swift-log's `StreamLogHandler` (same output, byte for byte), except that the logger's metadata
/// is formatted when a message is written rather than every time an item is set.
///
/// `StreamLogHandler` re-formats all of its metadata into a string on every change. The portal
/// sets an item per request (the request id) and PostgresNIO one per statement (the connection
/// id), at a log level that writes almost nothing: that formatting was about a tenth of the
/// portal's heap allocations per request (docs/benchmarks.md, issue 22).
struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        stream = StreamLogHandler.standardOutput(label: label)
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var stream = self.stream
        stream.metadata = metadata
        stream.log(event: event)
    }
}
