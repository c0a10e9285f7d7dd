import Hummingbird
import Logging
import NIOCore

/// Per-request state of the verification server: the client's address for guessing protection,
/// and on a mutual-TLS listener the channel (for the client certificate) and its thumbprint.
package struct ServerRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package var clientAddress: String?
    /// The connection, read by ``ClientCertificateMiddleware``; nil where there is none (tests).
    package var channel: (any Channel)?
    /// Set once ``ClientCertificateMiddleware`` has accepted the client's certificate.
    package var clientCertificateThumbprint: String?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
        channel = source.channel
    }

    /// CWA refuses bodies over 10,000 bytes (406, see ``CWARequestMiddleware``).
    package var maxUploadSize: Int { CWARequestMiddleware.maxBodySize }
}
