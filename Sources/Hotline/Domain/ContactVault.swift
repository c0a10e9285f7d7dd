import Crypto
import Foundation
import TeleTAN

/// A caller's phone number and name, as the callback queue keeps them: sealed with AES-GCM under
/// a key derived from the server secret, bound to their callback's id (a sealed contact copied to
/// another row does not open), and deleted when the callback ends.
package struct ContactVault: Sendable {
    package struct Contact: Codable, Sendable, Equatable {
        package let phone: String
        package let name: String
    }

    private let key: SymmetricKey
    private let hasher: KeyedHasher

    package init(serverSecret: SymmetricKey, hasher: KeyedHasher) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: serverSecret, info: Data("hotline-contact".utf8), outputByteCount: 32)
        self.hasher = hasher
    }

    func seal(_ contact: Contact, for callbackID: UUID) throws -> String {
        let box = try AES.GCM.seal(JSONEncoder().encode(contact), using: key, authenticating: Data(callbackID.uuidString.utf8))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    /// The contact, or nil when the row was changed or the secret replaced.
    func open(_ sealed: String, for callbackID: UUID) -> Contact? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = try? AES.GCM.open(box, using: key, authenticating: Data(callbackID.uuidString.utf8))
        else { return nil }
        return try? JSONDecoder().decode(Contact.self, from: plain)
    }

    /// The keyed fingerprint of a normalised number: for repeat-caller warnings and the audit.
    package func fingerprint(of phone: PhoneNumber) -> String {
        hasher.hash(phone.e164, for: .phoneNumber)
    }

    package func fingerprint(ofName name: String) -> String {
        hasher.hash(name, for: .personName)
    }
}
