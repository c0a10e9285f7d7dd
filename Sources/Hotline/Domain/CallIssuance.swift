import AccessControl
import Audit
import FluentKit
import Foundation
import Issuance
import PortalWeb
import TeleTAN

/// Issues the teleTAN of a hotline call. The script's rule lives here rather than in the page:
/// a teleTAN only when every required check is ticked, whatever path issues for a call. The
/// teleTAN is attached to the call (and the caller's number remembered for the repeat-caller
/// warning) in the transaction that creates it.
package struct CallIssuance: Sendable {
    package enum Outcome: Equatable {
        /// These required checks were not ticked: nothing was issued, the refusal is audited.
        case checksMissing([String])
        /// The issuer's answer (see ``TeleTANIssuer/Outcome``).
        case issuer(TeleTANIssuer.Outcome)
    }

    let checks: HotlineChecks
    let issuer: TeleTANIssuer
    let calls: Calls
    let history: NumberHistory
    let audit: AuditLog

    package init(checks: HotlineChecks, issuer: TeleTANIssuer, calls: Calls, history: NumberHistory, audit: AuditLog) {
        self.checks = checks
        self.issuer = issuer
        self.calls = calls
        self.history = history
        self.audit = audit
    }

    /// A TEST teleTAN for `call`, whose agent ticked `ticked`, with the call page's one-use
    /// `nonce`. The missing checks are refused (and audited on `db`) before the nonce is used.
    package func issue(
        in call: Calls.Row, ticked: Set<String>, by acting: ActingUser, nonce: FormNonce?, at time: Date, on db: any Database
    ) async throws -> Outcome {
        let missing = checks.requiredIDs.filter { !ticked.contains($0) }
        guard missing.isEmpty else {
            try await audit.append(AuditEvent(.teleTANIssue, .refused, by: acting, details: [
                "type": TeleTANType.test.rawValue, "reason": "required_check_missing", "call": call.id.uuidString.lowercased(),
                "missing": missing.joined(separator: ","),
            ]), at: time, on: db)
            return .checksMissing(missing)
        }
        let callID = call.id
        let phone = call.phone_fingerprint
        let purpose = IssuancePurpose(
            auditDetails: ["call": callID.uuidString.lowercased()], callID: callID.uuidString.lowercased(),
            onIssued: { [calls, history] fingerprint, tx in
                guard try await calls.attachTeleTAN(fingerprint, to: callID, agent: acting.username, at: time, on: tx) else {
                    throw IssuanceRefusal(reason: "call_not_open")
                }
                if let phone { try await history.record(phone, at: time, on: tx) }
            })
        return .issuer(try await issuer.issue(type: .test, by: acting, nonce: nonce, for: purpose))
    }
}
