import AccessControl
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore

/// Per-request state: who is signed in, in which language the pages are, where the request
/// came from.
package struct PortalRequestContext: AuthRequestContext, RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The signed-in user, set by ``SessionMiddleware``.
    package var identity: SignedInUser?
    package var language: Language = .english
    /// The client's address: the socket peer, or `X-Forwarded-For` behind a trusted proxy.
    package var clientAddress: String?
    /// True when the browser reached us over TLS (directly or through a trusted proxy).
    package var isHTTPS = false
    /// Set when the request carried a session cookie whose session had expired.
    package var sessionExpired = false
    /// Set when the request's session cookie named a session an admin ended.
    package var sessionEndedByAdmin = false
    /// Set by ``AccessMiddleware`` once the route group's access admitted the request; the typed
    /// contexts of signed-in groups (``SignedInContext``, ``PermittedContext``) are made from it.
    package internal(set) var admission: Admission?
    let peerAddress: String?
    /// 128 random bits in hex, in the `X-Request-ID` header, logs, error pages and the audit
    /// trail. Random, not a counter: ids seen on pages must not tell how busy the portal is.
    package let requestID: String

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress
        requestID = String(RandomToken.make().prefix(32))
        logger[metadataKey: "hb.request.id"] = .string(requestID)
    }

    /// Form bodies are small; larger ones are refused with 413 before they are read further.
    package var maxUploadSize: Int { 16 * 1024 }

    package var requestDecoder: URLEncodedFormDecoder { URLEncodedFormDecoder() }

    /// The signed-in user acting under `permission`, for domain code. nil when nobody is signed
    /// in or the user lacks it. Handlers take it from ``PermittedContext/acting``.
    func actingUser(for permission: Permission) -> ActingUser? {
        guard let user = identity, let role = user.roles.acting(for: permission) else { return nil }
        return ActingUser(
            username: user.username, role: role, roles: user.roles, sessionHash: user.sessionHash,
            address: clientAddress, requestID: requestID, logger: logger)
    }
}

/// What admitted a request to its route group: the group's access, and the form check its
/// handlers read forms through.
package struct Admission: Sendable {
    package let access: Access
    let forms: FormCheck
}
