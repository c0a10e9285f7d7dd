import Crypto
import Foundation

/// Short-lived secrets at rest (a teleTAN waiting to be shown, a caller's contact data, a
/// read-back result): JSON sealed with AES-256-GCM under a key derived from the server secret
/// for one purpose (HKDF-SHA-256, `info` = the purpose), bound to the row it belongs to as
/// authenticated data, stored as base64 of nonce, ciphertext and tag. A sealed value copied to
/// another row, or read with another purpose's key, does not open.
package struct Sealer: Sendable {
    private let key: SymmetricKey

    package init(serverSecret: SymmetricKey, purpose: String) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: serverSecret, info: Data(purpose.utf8), outputByteCount: 32)
    }

    package func seal(_ value: some Encodable, boundTo owner: String) throws -> String {
        let box = try AES.GCM.seal(JSONEncoder().encode(value), using: key, authenticating: Data(owner.utf8))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    /// The value, or nil when it cannot be opened (changed, another owner, the secret replaced).
    package func open<Value: Decodable>(_ type: Value.Type, from sealed: String, boundTo owner: String) -> Value? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = try? AES.GCM.open(box, using: key, authenticating: Data(owner.utf8))
        else { return nil }
        return try? JSONDecoder().decode(type, from: plain)
    }
}
