import AccessControl
import Audit
import FluentKit
import Foundation
import PAMAuth
import PortalWeb

/// The sign-in rules, apart from HTTP: which names and passwords are put to PAM at all, when a
/// name or address is locked, whether a waiting conversation may take its next step, and what
/// each failure does to the throttle's count and the audit trail. ``SignInController`` reads the
/// forms, asks PAM and turns these decisions into pages and cookies; this type never sees a
/// request.
package struct SignInPolicy: Sendable {
    package let throttle: SignInThrottle
    let audit: AuditLog
    let metrics: PortalMetrics
    let now: @Sendable () -> Date

    /// Who is signing in, as far as the rules and the audit trail care.
    package struct Attempt: Sendable {
        /// The name as typed (trimmed), or that of the waiting conversation.
        package let username: String
        package let address: String?
        package let requestID: String?

        package init(username: String, address: String?, requestID: String?) {
            self.username = username
            self.address = address
            self.requestID = requestID
        }
    }

    /// Whether a first step (name and password) goes to PAM.
    package enum Admission: Equatable {
        case admitted
        /// A name no account can have (empty, over 256 bytes, control characters) or a password
        /// with a NUL byte (PAM takes C strings and would see only the part before it): it fails
        /// like a wrong password, before the throttle's tables or PAM (audited, not counted).
        case failsLikeWrongPassword
        /// A locked name or address (or a name with as many attempts under way as it may have):
        /// refused without asking PAM. `ownEntry`: the first refusal of this lock, to be audited
        /// on its own (the rest are summed up when the lock ends).
        case locked(ownEntry: Bool)
    }

    /// Whether a waiting conversation takes its next step.
    package enum NextStep: Equatable {
        case proceed
        /// The conversation ends with the generic failure, audited with `reason`.
        case end(reason: String)
    }

    /// What a failed sign-in does to the attempt the throttle counted when it was admitted.
    package enum AttemptEnd: Equatable {
        /// A wrong password or code: a failure (may lock the name and the address).
        case failed
        /// No verdict on the password (PAM busy or unreachable, account refused, expired password
        /// not changed): the attempt is given back.
        case givenBack
        /// Nothing to do: refused before admission, or already ended.
        case settled
    }

    /// How long a lock lasts (the refusal page names it).
    package var lockout: Duration { throttle.lockout }

    package func admit(_ attempt: Attempt, password: String, on db: any Database) async throws -> Admission {
        guard PAMAuthenticator.isAcceptableUsername(attempt.username), !password.utf8.contains(0) else {
            try await recordFailure(attempt, reason: "authentication_failed", ending: .settled, on: db)
            return .failsLikeWrongPassword
        }
        let verdict = try await throttle.admit(username: attempt.username, address: attempt.address, now: now(), on: db)
        guard verdict == .allowed else {
            return .locked(ownEntry: try await throttle.countRefusal(
                verdict, username: attempt.username, address: attempt.address, now: now(), on: db))
        }
        return .admitted
    }

    /// The next step of a conversation PAM is waiting on (`username`: whose, if it still waits),
    /// with what was typed. A lock that came into force meanwhile (failures elsewhere) stops it:
    /// no more one-time codes for a locked name. So does a NUL byte, which PAM would not see.
    package func nextStep(of username: String?, typed: [String], address: String?, on db: any Database) async throws -> NextStep {
        if let username, try await throttle.check(username: username, address: address, now: now(), on: db) != .allowed {
            return .end(reason: "throttled")
        }
        if typed.contains(where: { $0.utf8.contains(0) }) { return .end(reason: "authentication_failed") }
        return .proceed
    }

    /// What a failure PAM reported does to the attempt: only a wrong password or code counts
    /// towards a lock; an account PAM refused (said only after the right password, or for every
    /// password alike), an expired password not changed, or no answer from PAM is given back; an
    /// abandoned conversation keeps its attempt counted (it may have been a guess). (PAM busy is
    /// given back at once with ``giveBack(_:on:)``; its refusal is audited as settled.)
    package static func ending(of failure: PAMFailure) -> AttemptEnd {
        switch failure {
        case .authenticationFailed: .failed
        case .accountRefused, .passwordChangeFailed, .timedOut, .systemError, .busy: .givenBack
        case .conversationExpired: .settled
        }
    }

    /// Ends the attempt as `ending` says and audits the failure with `reason`, in one transaction.
    package func recordFailure(_ attempt: Attempt, reason: String, ending: AttemptEnd, on db: any Database) async throws {
        let time = now()
        try await db.transaction { tx in
            switch ending {
            case .failed: try await throttle.recordFailure(username: attempt.username, address: attempt.address, now: time, on: tx)
            case .givenBack: try await throttle.giveBack(username: attempt.username, now: time, on: tx)
            case .settled: break
            }
            let actor = AccountKey.of(Self.auditableName(attempt.username))
            try await audit.append(AuditEvent(
                action: .signIn, outcome: .failure, actor: actor,
                address: attempt.address, requestID: attempt.requestID,
                details: Self.typedDetail(attempt.username, actor: actor).merging(["reason": reason]) { $1 }), at: time, on: tx)
        }
        metrics.signIn(outcome: reason)
    }

    /// PAM was too busy to be asked: the attempt is given back, nothing else is written (the
    /// refusal is audited with the others turned away, see ``RefusalTally``).
    package func giveBack(_ attempt: Attempt, on db: any Database) async throws {
        try await throttle.giveBack(username: attempt.username, now: now(), on: db)
    }

    /// A sign-in: the count of the name typed and of the name PAM signed in start again.
    package func recordSuccess(typed: String, signedIn: String, on db: any Database) async throws {
        try await throttle.recordSuccess(typed: typed, signedIn: signedIn, on: db)
    }

    /// The spelling typed, when it is not the actor's (`ALICE@example.org` for `alice`): the
    /// admin's search finds the entry under either.
    static func typedDetail(_ typed: String, actor: String) -> [String: String] {
        let typed = auditableName(typed)
        return typed.isEmpty || typed == actor ? [:] : ["typed": typed]
    }

    /// A typed name as the audit trail can hold it: control characters (NUL included, which
    /// PostgreSQL refuses in text) and invisible ones (``PAMAuthenticator/isHidden(_:)``) become
    /// "?", and it is cut to 256 bytes of UTF-8 between two Unicode scalars (counting characters
    /// is not enough: one character can carry thousands of combining marks, and the column is
    /// indexed).
    static func auditableName(_ typed: String) -> String {
        var result = ""
        var bytes = 0
        for scalar in typed.unicodeScalars {
            let clean: Unicode.Scalar = PAMAuthenticator.isHidden(scalar) ? "?" : scalar
            let size = String(clean).utf8.count
            if bytes + size > 256 { break }
            result.unicodeScalars.append(clean)
            bytes += size
        }
        return result
    }
}
