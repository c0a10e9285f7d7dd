import Crypto
import Foundation

/// Short-lived secrets at rest (a teleTAN waiting to be shown, a caller's contact data, a
/// read-back result): JSON sealed with AES-256-GCM under a key derived from the server secret
/// for one purpose (HKDF-SHA-256, `info` = the purpose), bound to the row it belongs to as
/// authenticated data, stored as base64 of nonce, ciphertext and tag. A sealed value copied to
/// another row, or read with another purpose's key, does not open.
///
/// The stored text names the server key that sealed it: `kID:` before the base64, none for key 1
/// (what releases before key rotation wrote and still read), so a value sealed before a rotation
/// opens until its key is retired.
package struct Sealer: Sendable {
    private let keyring: ServerKeyring
    private let purpose: String

    package init(keyring: ServerKeyring, purpose: String) {
        self.keyring = keyring
        self.purpose = purpose
    }

    /// One secret as key id 1 (tests).
    package init(serverSecret: SymmetricKey, purpose: String) {
        self.init(keyring: ServerKeyring(secret: serverSecret), purpose: purpose)
    }

    package func seal(_ value: some Encodable, boundTo owner: String) throws -> String {
        let serverKey = keyring.current()
        let box = try AES.GCM.seal(JSONEncoder().encode(value), using: derivedKey(serverKey), authenticating: Data(owner.utf8))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return (serverKey.id == 1 ? "" : "k\(serverKey.id):") + combined.base64EncodedString()
    }

    /// The value, or nil when it cannot be opened (changed, another owner, its key retired).
    package func open<Value: Decodable>(_ type: Value.Type, from sealed: String, boundTo owner: String) -> Value? {
        guard let (keyID, base64) = Self.split(sealed), let serverKey = keyring.key(id: keyID),
              let data = Data(base64Encoded: String(base64)), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = try? AES.GCM.open(box, using: derivedKey(serverKey), authenticating: Data(owner.utf8))
        else { return nil }
        return try? JSONDecoder().decode(type, from: plain)
    }

    /// The key id a sealed value names (1 when it names none), or nil when the prefix is malformed.
    package static func keyID(of sealed: String) -> Int? {
        split(sealed)?.keyID
    }

    private static func split(_ sealed: String) -> (keyID: Int, base64: Substring)? {
        // Base64 has no ':', so a prefix cannot be mistaken for data.
        guard sealed.hasPrefix("k"), let colon = sealed.firstIndex(of: ":") else { return (1, sealed[...]) }
        guard let id = Int(sealed[sealed.index(after: sealed.startIndex)..<colon]), id > 0 else { return nil }
        return (id, sealed[sealed.index(after: colon)...])
    }

    private func derivedKey(_ serverKey: ServerKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: serverKey.secret, info: Data(purpose.utf8), outputByteCount: 32)
    }
}
