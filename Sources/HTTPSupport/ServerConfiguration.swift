public import HummingbirdCore
public import NIOCore

/// HTTP/1.1 listener settings both services use.
public enum HTTPServerDefaults {
    /// A connection that sends nothing for this long is closed, so idle or half-sent requests
    /// cannot hold file descriptors for ever (without it, enough idle connections made the portal
    /// stop answering). Above the 60 s that reverse proxies keep idle upstream connections by
    /// default (nginx `keepalive_timeout`), so the proxy, not we, closes an idle keep-alive
    /// connection, and never sends a request on one we are closing.
    public static let idleTimeout: TimeAmount = .seconds(75)

    public static var http1: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(idleTimeout: idleTimeout)
    }
}
