import Audit
import FluentKit
import Foundation
import Issuance
import TeleTAN
import Verification

/// "Who gave out this teleTAN?": an admin types one, and its issuance, the hotline call it came
/// from and its status are found by keyed fingerprint, the only form in which the portal keeps it.
package struct TeleTANLookup: Sendable {
    /// What became of a teleTAN as far as the portal can tell.
    package enum Status: String, Sendable, Equatable {
        case unused, redeemed, expired, revoked
        /// Past its validity, and the record that would tell redeemed from expired is gone
        /// (the portal keeps it eight days).
        case lapsed
        /// The verification service cannot be asked.
        case unknown
    }

    package struct Finding: Sendable {
        /// The successful `teletan.issue` entry, if the trail still holds it.
        package let issuance: AuditRow?
        /// Its details: type, validity, the hotline call.
        package let issuanceDetails: [String: String]
        /// The newest entries about this teleTAN (issuance, read-backs, revocation, lookups).
        package let entries: [AuditRow]
        /// The hotline call it was issued in (`call:<id>`, the call's audit subject).
        package let callSubject: String?
        package let status: Status
        package let validUntil: Date?
    }

    let hasher: KeyedHasher
    let service: any VerificationService
    let search: AuditSearch
    let issued = IssuedTeleTANs()

    package init(hasher: KeyedHasher, service: any VerificationService, search: AuditSearch) {
        self.hasher = hasher
        self.service = service
        self.search = search
    }

    /// The fingerprint of what the admin typed, read the way the app reads it plus spaces and
    /// hyphens between groups; nil when it is no teleTAN (wrong length, letters or check character).
    /// Under the server key the teleTAN was issued with, so one issued before a key rotation is
    /// found until that key retires; the current key's for a teleTAN nobody issued.
    package func fingerprint(of typed: String, on db: any Database) async throws -> String? {
        let compact = typed.filter { !$0.isWhitespace && $0 != "-" }
        guard let teleTAN = TeleTAN(compact) else { return nil }
        return try await TeleTANScreen(hasher: hasher).fingerprint(of: teleTAN, on: db)
    }

    /// A fingerprint as it appears in URLs and the audit trail: 64 lower-case hex digits.
    package static func isFingerprint(_ text: String) -> Bool {
        text.count == 64 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    package func find(fingerprint: String, now: Date, on db: any Database) async throws -> Finding {
        var about = AuditFilter()
        about.subject = fingerprint
        let entries = try await search.page(about, at: .newest, on: db).entries
        // On its own: every lookup and view adds an entry about the teleTAN, so the issuance soon
        // falls out of the newest page.
        var issuanceFilter = about
        issuanceFilter.action = AuditAction.teleTANIssue.rawValue
        issuanceFilter.outcome = .success
        let issuance = try await search.page(issuanceFilter, at: .newest, on: db).entries.last
        let details = issuance?.detailValues ?? [:]
        let row = try await issued.find(fingerprint: fingerprint, on: db)
        let validUntil = row?.valid_until ?? details["valid_until"].flatMap { try? Date($0, strategy: .iso8601) }
        return Finding(
            issuance: issuance, issuanceDetails: details, entries: entries, callSubject: details["call"].map { "call:\($0)" },
            status: await status(of: row, validUntil: validUntil, now: now, on: db), validUntil: validUntil)
    }

    private func status(of row: IssuedTeleTANs.Row?, validUntil: Date?, now: Date, on db: any Database) async -> Status {
        if row?.revoked_at != nil { return .revoked }
        if let row, let reference = row.reference {
            let roles = row.type == TeleTANType.event.rawValue ? ["c19hotline_event"] : ["c19hotline"]
            let answer = await service.statuses(of: [reference], issuer: Issuer(username: row.issued_by, roles: roles), within: db)
            if let status = answer?[reference] { return Status(rawValue: status.rawValue) ?? .unknown }
        }
        // Without the service's word, a teleTAN past its validity can no longer be used either way.
        if let validUntil, validUntil <= now, row == nil { return .lapsed }
        return .unknown
    }
}
