import Hummingbird
import Logging
import NIOCore

/// Per-request state of the verification server: the client's address for guessing protection,
/// and on a mutual-TLS listener the channel (for the client certificate) and its thumbprint.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var clientAddress: String?
    /// The connection, read by ``ClientCertificateMiddleware``; nil where there is none (tests).
    public var channel: (any Channel)?
    /// Set once ``ClientCertificateMiddleware`` has accepted the client's certificate.
    public var clientCertificateThumbprint: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
        channel = source.channel
    }

    /// CWA refuses bodies over 10,000 bytes (406, see ``CWARequestMiddleware``).
    public var maxUploadSize: Int { CWARequestMiddleware.maxBodySize }
}
