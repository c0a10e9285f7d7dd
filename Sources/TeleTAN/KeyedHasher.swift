import Crypto

/// HMAC-SHA-256 with the server secret. Every secret the system keeps (teleTANs, session ids,
/// form nonces) is stored only as such a keyed hash: unlike a plain SHA-256, it cannot be
/// brute-forced offline from a database dump without the key (the teleTAN space is only ~44 bits).
///
/// New hashes use the keyring's current key; a lookup computes one hash per live key and matches
/// any (`hashes`, `matches`), so what was stored before a rotation is found until its key retires.
///
/// Each use has its own `Purpose`, mixed into the input, so that a hash from one table never
/// matches a hash from another (a teleTAN's audit fingerprint is not its storage hash).
package struct KeyedHasher: Sendable {
    package struct Purpose: Sendable, Hashable {
        package let label: String
        package init(_ label: String) { self.label = label }

        package static let teleTANStorage = Purpose("teletan-storage")
        package static let teleTANFingerprint = Purpose("teletan-fingerprint")
        package static let session = Purpose("session")
        package static let csrf = Purpose("csrf")
        package static let preSession = Purpose("pre-session")
        package static let formNonce = Purpose("form-nonce")
        package static let formNonceMAC = Purpose("form-nonce-mac")
        package static let registrationToken = Purpose("registration-token")
        package static let tan = Purpose("tan")
        /// A caller's phone number (normalised), for repeat-caller warnings and the audit trail.
        package static let phoneNumber = Purpose("phone-number")
        /// A caller's name, for the audit trail.
        package static let personName = Purpose("person-name")
    }

    package let keyring: ServerKeyring

    package init(keyring: ServerKeyring) {
        self.keyring = keyring
    }

    /// One secret as key id 1 (tests).
    package init(key: SymmetricKey) {
        self.init(keyring: ServerKeyring(secret: key))
    }

    /// The hash to store: under the current key.
    package func hash(_ value: some StringProtocol, for purpose: Purpose) -> String {
        Self.hash(value, for: purpose, key: keyring.current().secret)
    }

    /// The hashes to look a stored one up by: one per live key, the current key's first.
    package func hashes(_ value: some StringProtocol, for purpose: Purpose) -> [String] {
        keyring.live().map { Self.hash(value, for: purpose, key: $0.secret) }
    }

    /// Whether `candidate` is the hash of `value` under any live key (constant time per key).
    package func matches(_ candidate: some StringProtocol, _ value: some StringProtocol, for purpose: Purpose) -> Bool {
        matchingKey(candidate, value, for: purpose) != nil
    }

    /// The live key under which `candidate` is the hash of `value`, if any.
    package func matchingKey(_ candidate: some StringProtocol, _ value: some StringProtocol, for purpose: Purpose) -> ServerKey? {
        keyring.live().first { Self.constantTimeEquals(candidate, Self.hash(value, for: purpose, key: $0.secret)) }
    }

    /// Lower-case hex of HMAC-SHA-256(key, purpose || 0x00 || value).
    package static func hash(_ value: some StringProtocol, for purpose: Purpose, key: SymmetricKey) -> String {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array(purpose.label.utf8))
        hmac.update(data: [0])
        hmac.update(data: Array(value.utf8))
        return Self.hex(hmac.finalize())
    }

    /// Compares two hex strings in time that depends only on their length.
    package static func constantTimeEquals(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// Lower-case hex of any bytes (digests, thumbprints); shared by the audit chain and TLS pinning.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
