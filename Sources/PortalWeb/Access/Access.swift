import AccessControl

/// What a route group needs before any of its handlers runs. Every route is declared with one
/// (``DeclaredRoutes``); ``AccessMiddleware`` enforces it.
package enum Access: Sendable, Equatable, CustomStringConvertible {
    /// Anyone, signed in or not: sign-in, health checks, the language switch.
    case `public`
    /// Any signed-in person, whatever their roles (the start page, signing out).
    case signedIn
    /// A signed-in person whose roles grant the permission.
    case permission(Permission)

    /// Whether a person with `roles` (nil: not signed in) gets past this declaration.
    package func admits(_ roles: Set<Role>?) -> Bool {
        switch self {
        case .public: true
        case .signedIn: roles != nil
        case .permission(let permission): roles?.allow(permission) ?? false
        }
    }

    package var description: String {
        switch self {
        case .public: "public"
        case .signedIn: "signed in"
        case .permission(let permission): permission.rawValue
        }
    }
}
