/// One key for every spelling of an account name that a directory may accept: lower-cased, without
/// a `@domain` suffix or a `DOMAIN\` prefix. SSSD signs `alice`, `ALICE` and `alice@example.org`
/// in as one person; counting their failed sign-ins under one key keeps an attacker from
/// multiplying the guesses a lock allows by changing the spelling. The key is also the actor of
/// a failed sign-in in the audit trail, so the admin's search and the Lockouts page find them all.
///
/// Two accounts that differ only in case, or in the domain, share a key: their failures count
/// together (a lock then holds both), which costs them nothing they could not lose to a stranger
/// typing their name.
package enum AccountKey {
    package static func of(_ name: String) -> String {
        var key = Substring(name)
        if let slash = key.lastIndex(of: "\\"), key.index(after: slash) < key.endIndex {
            key = key[key.index(after: slash)...]
        }
        if let at = key.firstIndex(of: "@"), at > key.startIndex {
            key = key[..<at]
        }
        return key.lowercased()
    }
}
