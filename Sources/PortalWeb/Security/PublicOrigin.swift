import Foundation

/// Where browsers reach the portal (`--public-url`): the only host a request may name and the
/// only origin a form may come from. Without it, a page of another site whose name was made to
/// resolve to the portal's address (DNS rebinding) would be same-origin with itself and could
/// read the portal's pages.
package struct PublicOrigin: Sendable, Equatable, CustomStringConvertible {
    package let scheme: String
    package let host: String
    package let port: Int

    /// nil unless `url` is `http(s)://host[:port]` with at most a trailing "/".
    package init?(_ url: String) {
        // The encoded host: an internationalised name as browsers send it in `Host` (punycode).
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme), let host = components.encodedHost, !host.isEmpty,
              (1...65535).contains(components.port ?? 80),
              components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil,
              components.user == nil, components.password == nil
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        port = components.port ?? (scheme == "https" ? 443 : 80)
        authority = port == (scheme == "https" ? 443 : 80) ? self.host : "\(self.host):\(port)"
    }

    package var description: String {
        "\(scheme)://\(authority)"
    }

    /// `host`, or `host:port` when the port is not the scheme's default.
    let authority: String

    /// Whether a request's `Host` (authority) names this origin's host and port. The scheme is
    /// not compared: behind a TLS proxy the portal itself is reached over plain HTTP.
    package func matches(authority requested: String) -> Bool {
        let requested = requested.lowercased()
        return requested == authority || requested.hasPrefix(host) && requested.dropFirst(host.count) == ":\(port)"
    }

    /// Whether an `Origin` header names exactly this origin.
    package func matches(origin: String) -> Bool {
        PublicOrigin(origin) == self
    }
}
