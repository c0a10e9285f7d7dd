package import Hummingbird
package import HTTPTypes

extension Router {
    /// The methods a path can be asked for that get 405 instead of 404 when the path exists.
    /// Other, non-standard methods still get 404 (CONNECT is a proxy method and not routed).
    static var answeredMethods: [HTTPRequest.Method] { [.get, .head, .post, .put, .delete, .patch, .options, .trace] }

    /// Answers a method a defined path does not have with 405 and an `Allow` header
    /// (RFC 9110 §15.5.6) instead of 404, so clients and operators can tell a wrong method from
    /// a wrong path. Call after every route is added. Pass `headWhereGet` when the router was made
    /// with `.autoGenerateHeadEndpoints` (the router does not tell), so HEAD counts as allowed
    /// wherever GET is.
    package func addMethodNotAllowedResponses(headWhereGet: Bool) {
        var allowedByPath: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            allowedByPath[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        for (path, allowed) in allowedByPath.values {
            var methods = allowed
            if headWhereGet, methods.contains(.get) { methods.insert(.head) }
            let allow = methods.map(\.rawValue).sorted().joined(separator: ", ")
            for method in Self.answeredMethods where !methods.contains(method) {
                on(path, method: method) { _, _ -> Response in
                    throw HTTPError(.methodNotAllowed, headers: [.allow: allow])
                }
            }
        }
    }
}
