import TeleTAN

/// CSRF tokens. A signed-in form carries a token derived from the session; the sign-in forms
/// (before there is a session) carry one derived from a random pre-session cookie. Both are
/// keyed hashes, so they cannot be forged without the server secret, and are compared in
/// constant time.
struct CSRF: Sendable {
    static let preSessionCookie = "portal_presession"
    let hasher: KeyedHasher

    func token(forSession sessionHash: String) -> String {
        hasher.hash(sessionHash, for: .csrf)
    }

    func token(forPreSession cookieValue: String) -> String {
        hasher.hash("pre:" + cookieValue, for: .csrf)
    }

    func isValid(_ submitted: String?, expected: String) -> Bool {
        guard let submitted else { return false }
        return KeyedHasher.constantTimeEquals(submitted, expected)
    }
}
