/// A question PAM asked that only the person signing in can answer (a one-time code, a new
/// password). The portal shows it as the next form step and answers with ``PAMAuthenticator/answer(_:with:)``.
package struct PAMChallenge: Sendable, Equatable {
    package enum Phase: String, Sendable {
        /// More credentials are needed (e.g. a one-time code after the password).
        case authentication
        /// The password has expired and must be changed (`pam_chauthtok`).
        case passwordChange
    }

    /// Identifies the waiting PAM transaction; unguessable, valid for one answer.
    package let conversationID: String
    package let phase: Phase
    /// The module's prompt, e.g. "One-time password (OATH) for `alice': ".
    package let prompt: String
    /// Whether the answer may be shown while typing (PAM_PROMPT_ECHO_ON).
    package let echo: Bool
    /// Informational and error messages the module sent before the prompt.
    package let messages: [String]
}

package enum PAMFailure: Sendable, Equatable {
    /// Wrong password or code, or unknown user: PAM does not tell these apart, nor do we.
    case authenticationFailed
    /// The account authenticated but may not sign in (expired, disabled, locked, outside its
    /// hours): `pam_acct_mgmt` refused it, or the module refused the account itself.
    case accountRefused
    /// The expired password could not be changed (too weak, entries differ, ...).
    case passwordChangeFailed(messages: [String])
    /// The person did not answer a prompt in time, or the sign-in step was already used.
    case conversationExpired
    /// PAM did not answer in time (an unreachable directory, say).
    case timedOut
    /// Too many sign-ins are in progress; try again shortly.
    case busy
    /// PAM itself failed (misconfigured service, missing module) or could not reach what checks
    /// the password (`PAM_AUTHINFO_UNAVAIL`: the directory is down).
    case systemError(code: Int32)
}

package enum PAMOutcome: Sendable, Equatable {
    /// Authenticated and account valid. `username` is the account's canonical name: the one PAM
    /// reports, as NSS spells it.
    case success(username: String)
    case challenge(PAMChallenge)
    case failure(PAMFailure)
}

extension PAMFailure {
    /// PAM itself failed in a way waiting will not mend (a missing module, a broken service
    /// file): the person signing in needs the administrator, not "try again".
    package var isServiceProblem: Bool {
        if case .systemError(let code) = self { return code != PAMErrorName.authinfoUnavailable }
        return false
    }

    /// The name of a ``systemError(code:)`` (e.g. `authinfo_unavailable`), nil for other failures.
    package var errorName: String? {
        if case .systemError(let code) = self { return PAMErrorName.of(code) }
        return nil
    }
}
