import Hummingbird
import TeleTAN

/// CSRF tokens. A signed-in form carries a token derived from the session; the sign-in forms
/// (before there is a session) carry one derived from a random pre-session cookie. Both are
/// keyed hashes, so they cannot be forged without the server secret, and are compared in
/// constant time. Forms carry the current key's token; a token under any live key is accepted,
/// so a form rendered just before a key rotation still submits.
package struct CSRF: Sendable {
    package static let preSessionCookie = "portal_presession"
    let hasher: KeyedHasher

    package func token(forSession sessionHash: String) -> String {
        hasher.hash(sessionHash, for: .csrf)
    }

    package func token(forPreSession cookieValue: String) -> String {
        hasher.hash("pre:" + cookieValue, for: .csrf)
    }

    /// A new pre-session cookie value: 128 random bits and a keyed MAC over them (64 hex digits),
    /// so that the portal replaces a value a client made up. (A value the portal made, fetched
    /// and planted by a site able to set cookies for this host, still passes; what stops its use
    /// is the Origin check on every form post.)
    package func makePreSession() -> String {
        let random = String(RandomToken.make().prefix(32))
        return random + preSessionMAC(random)
    }

    package func isServerMadePreSession(_ value: String) -> Bool {
        guard RandomToken.isWellFormed(value) else { return false }
        let mac = String(value.suffix(32))
        return hasher.hashes(value.prefix(32), for: .preSession).contains { KeyedHasher.constantTimeEquals(mac, $0.prefix(32)) }
    }

    private func preSessionMAC(_ random: some StringProtocol) -> String {
        String(hasher.hash(random, for: .preSession).prefix(32))
    }

    /// A sign-in form's token for the pre-session cookie.
    package func isValid(_ submitted: String?, forPreSession cookieValue: String) -> Bool {
        guard let submitted else { return false }
        return hasher.matches(submitted, "pre:" + cookieValue, for: .csrf)
    }

    /// A signed-in form's token; anything else is refused with 403 (the log line says which).
    package func require(_ submitted: String?, for user: SignedInUser) throws {
        guard let submitted, !submitted.isEmpty else { throw HTTPError(.forbidden, message: "CSRF token missing from the form") }
        guard hasher.matches(submitted, user.sessionHash, for: .csrf) else {
            throw HTTPError(.forbidden, message: "CSRF token wrong: not the one of this session (a form from an older session?)")
        }
    }
}
