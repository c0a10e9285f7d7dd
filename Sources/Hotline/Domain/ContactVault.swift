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

    private let sealer: Sealer
    private let hasher: KeyedHasher

    package init(hasher: KeyedHasher) {
        sealer = Sealer(keyring: hasher.keyring, purpose: "hotline-contact")
        self.hasher = hasher
    }

    func seal(_ contact: Contact, for callbackID: UUID) throws -> String {
        try sealer.seal(contact, boundTo: callbackID.uuidString)
    }

    /// The contact, or nil when the row was changed or its server key retired.
    func open(_ sealed: String, for callbackID: UUID) -> Contact? {
        sealer.open(Contact.self, from: sealed, boundTo: callbackID.uuidString)
    }

    /// The keyed fingerprint of a normalised number: for repeat-caller warnings and the audit.
    package func fingerprint(of phone: PhoneNumber) -> String {
        hasher.hash(phone.e164, for: .phoneNumber)
    }

    /// The number's fingerprints under every live server key, for looking it up.
    package func fingerprints(of phone: PhoneNumber) -> [String] {
        hasher.hashes(phone.e164, for: .phoneNumber)
    }

    package func fingerprint(ofName name: String) -> String {
        hasher.hash(name, for: .personName)
    }
}
