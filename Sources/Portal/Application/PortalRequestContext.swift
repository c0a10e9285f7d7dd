import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore

/// Per-request state: who is signed in, in which language the pages are, where the request
/// came from.
public struct PortalRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The signed-in user, set by ``SessionMiddleware``.
    public var identity: SignedInUser?
    public var language: Language = .english
    /// The client's address: the socket peer, or `X-Forwarded-For` behind a trusted proxy.
    public var clientAddress: String?
    /// True when the browser reached us over TLS (directly or through a trusted proxy).
    public var isHTTPS = false
    /// Set when the request carried a session cookie whose session had expired.
    public var sessionExpired = false
    let peerAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress
    }

    public var requestID: String { id }

    /// Form bodies are small; larger ones are refused with 413 before they are read further.
    public var maxUploadSize: Int { 16 * 1024 }

    public var requestDecoder: URLEncodedFormDecoder { URLEncodedFormDecoder() }
}
