import Audit
import FluentKit
import Foundation
import Issuance
import SQLKit
import Storage
import TeleTAN

/// Keeps teleTANs out of the append-only audit trail when an admin types one into a search field.
///
/// Every field but Actor refuses a teleTAN-shaped value outright (``AuditFilter/parse``). Actor
/// cannot: a username may have the teleTAN's form (ten characters from its alphabet with a
/// matching check character, about one in 31 such names). So a teleTAN-shaped Actor is compared,
/// by keyed fingerprint, with the teleTANs this portal issued: the `issued_teletans` rows (kept
/// eight days, longer than any teleTAN is valid, so every live teleTAN is there) and the subjects
/// of the audit trail (a teleTAN's issuance, lookups and revocation, as long as retention keeps
/// them). A match is treated as a teleTAN: taken out of the filter like any other field's, not
/// searched for, not shown again, and the audit entry names only the field and the fingerprint.
/// Anything else is a username and is searched for and recorded as typed.
package struct TeleTANScreen: Sendable {
    let hasher: KeyedHasher
    let issued = IssuedTeleTANs()

    package init(hasher: KeyedHasher) {
        self.hasher = hasher
    }

    /// The keyed fingerprint, as the audit trail and `issued_teletans` keep a teleTAN: under the
    /// server key it was issued with (see `knownFingerprint`), else under the current key.
    package func fingerprint(of teleTAN: TeleTAN, on db: any Database) async throws -> String {
        try await knownFingerprint(of: teleTAN, on: db) ?? hasher.hash(teleTAN.value, for: .teleTANFingerprint)
    }

    /// The fingerprint under the first live server key that this portal issued `teleTAN` with (or
    /// whose entries still name it); nil when none does. One probe per live key.
    package func knownFingerprint(of teleTAN: TeleTAN, on db: any Database) async throws -> String? {
        for fingerprint in hasher.hashes(teleTAN.value, for: .teleTANFingerprint) {
            if try await issued.find(fingerprint: fingerprint, on: db) != nil { return fingerprint }
            struct Row: Decodable { let seq: Int64 }
            // One probe of the (subject, seq) index.
            if try await sql(db).select().column("seq").from("audit_log").where("subject", .equal, SQLBind(fingerprint))
                .limit(1).first(decoding: Row.self) != nil { return fingerprint }
        }
        return nil
    }

    /// True when this portal issued `teleTAN` (or its entries still name it).
    package func isIssued(_ teleTAN: TeleTAN, on db: any Database) async throws -> Bool {
        try await knownFingerprint(of: teleTAN, on: db) != nil
    }

    /// `parsed` with an issued teleTAN in Actor moved out of the filter (see above).
    package func screen(_ parsed: AuditFilter.Parsed, on db: any Database) async throws -> AuditFilter.Parsed {
        guard let teleTAN = parsed.actorTeleTAN, try await isIssued(teleTAN, on: db) else { return parsed }
        var screened = parsed
        screened.filter.actor = nil
        screened.teleTANFields.insert("actor", at: 0)
        screened.typedTeleTAN = teleTAN
        return screened
    }
}
