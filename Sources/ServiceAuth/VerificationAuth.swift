import Foundation
import TeleTAN

/// How the portal authenticates itself to a verification server (`--verification-auth`): the
/// bearer token it signs for an officer, and the type header it sends with a teleTAN request.
package protocol VerificationAuth: Sendable {
    /// `portal` or `cwa`, as `--verification-auth` names the format.
    var format: String { get }

    /// A fresh, short-lived bearer token for `username` with `roles` (CWA role names).
    func token(username: String, roles: [String], now: Date) async throws -> String

    /// The `X-CWA-TELETAN-TYPE` value for a teleTAN of `type`; nil sends no header.
    func typeHeader(for type: TeleTANType) -> String?

    /// What an operator should check when the server refuses the token (HTTP 401), for the log.
    var refusalHint: String { get }
}

/// Today's format (`--verification-auth portal`): this project's ES256 tokens with a top-level
/// `roles` claim, and the type header always sent. (`token(username:roles:now:)` is its own.)
extension PortalTokenSigner: VerificationAuth {
    package var format: String { "portal" }

    package func typeHeader(for type: TeleTANType) -> String? { type.rawValue }

    package var refusalHint: String {
        "the server does not trust this portal's key (its --trusted-portal-key must be the public key of --verification-key), "
            + "the server's --audience is not this portal's --verification-audience ('\(audience)'), "
            + "the two clocks differ by more than a minute, or the server expects another token format (--verification-auth cwa for a CWA server)"
    }
}
