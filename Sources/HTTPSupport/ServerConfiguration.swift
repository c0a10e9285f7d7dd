package import HummingbirdCore
package import NIOCore

/// HTTP/1.1 listener settings both services use.
package enum HTTPServerDefaults {
    /// A connection that sends nothing for this long is closed, so idle connections and stalled
    /// request heads cannot hold file descriptors for ever (without it, enough idle connections
    /// made the portal stop answering). A request being handled is never cut off. A client that
    /// trickles a body a byte at a time is not stopped by this: that is the reverse proxy's job
    /// (docs/deployment.md). Above the 60 s that reverse proxies keep idle upstream connections by
    /// default (nginx `keepalive_timeout`), so the proxy, not we, closes an idle keep-alive
    /// connection, and never sends a request on one we are closing.
    package static let idleTimeout: TimeAmount = .seconds(75)

    package static var http1: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(idleTimeout: idleTimeout)
    }
}
