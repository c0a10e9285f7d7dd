import Hummingbird

/// `GET /auth/realms/cwa/protocol/openid-connect/certs` on the metrics listener: the portal's
/// signing certificate in Keycloak's certs format, where a CWA verification server (its
/// `jwt.server` set to this listener) fetches it on every token it checks. Never on the public
/// listener: only the verification server needs it, and the network should let only it reach
/// the metrics listener (docs/deployment.md).
package struct CertsRoute: Sendable {
    /// Where Keycloak serves a realm's certs, for the realm CWA's server asks for.
    package static let path = "/auth/realms/cwa/protocol/openid-connect/certs"

    /// The JSON document (`ServiceAuth.CertsDocument`), made once at start-up.
    let document: String

    package init(document: String) {
        self.document = document
    }

    func addRoute(to router: Router<BasicRequestContext>) {
        router.get(RouterPath(Self.path)) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: document)))
        }
    }
}
