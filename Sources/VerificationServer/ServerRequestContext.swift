import Hummingbird
import Logging
import NIOCore

/// Per-request state of the verification server: the client's address for guessing protection.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// CWA refuses bodies over 10,000 bytes (406, see ``CWARequestMiddleware``).
    public var maxUploadSize: Int { CWARequestMiddleware.maxBodySize }
}
