import AccessControl
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

    /// The key the guessing protection counts and locks under: the address, an IPv6 one by its
    /// /64 (``AddressKey``, as the portal's sign-in does), so that one host cannot take a fresh
    /// count with each of its 2^64 addresses.
    package var guessingKey: String { AddressKey.of(clientAddress ?? "unknown") }

    /// CWA refuses bodies over 10,000 bytes (406, see ``CWARequestMiddleware``).
    package var maxUploadSize: Int { CWARequestMiddleware.maxBodySize }
}
