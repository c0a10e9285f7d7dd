import Hummingbird

/// The least time a failed sign-in takes (`--signin-failure-time`), so that its time does not
/// tell whether the account exists. With a PAM stack that adds no pause of its own
/// (`pam_unix nodelay`, `pam_ldap`, `pam_sss`), pam_unix refuses an unknown name in a few
/// milliseconds but hashes an existing account's password first: 27 ms against 150 ms, told apart
/// by anyone who times a handful of sign-ins. Every failed sign-in is therefore answered no
/// sooner than `minimum` after the request arrived, plus a random jitter of up to a fifth of it,
/// whatever PAM took (a PAM that takes longer still shows its own time: keep `minimum` above the
/// slowest refusal of the stack).
///
/// The wait comes after the sign-in has left the gate and PAM: it holds no place and no thread.
struct FailureTime: Sendable {
    let minimum: Duration

    /// Whether `status` is a failed sign-in's answer: 401 (wrong password, unknown or malformed
    /// name, an expired step, a password change that failed) or 403 (an account PAM refused).
    /// Locks, a full gate and PAM busy (429, 503) say nothing about the account and wait
    /// ``SignInController/refusalDelay``.
    static func isFailure(_ status: HTTPResponse.Status) -> Bool {
        status == .unauthorized || status == .forbidden
    }

    /// Waits until `minimum` and a random part of a fifth of it have passed since `start`.
    func wait(since start: ContinuousClock.Instant) async {
        guard minimum > .zero else { return }
        let jitter = minimum / 5 / 1000 * Int.random(in: 0...1000)
        try? await Task.sleep(until: start + minimum + jitter, clock: .continuous)
    }
}
