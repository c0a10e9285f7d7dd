import FluentKit
import Foundation
import Hummingbird
import Storage

/// Slows down, then refuses, an address that keeps presenting invalid teleTANs to
/// `/registrationToken`. Counts live in the database (shared by instances); other addresses are
/// not affected.
///
/// An attempt is counted when it is admitted, before its teleTAN is looked up, and given back if
/// the teleTAN was valid: concurrent guesses from one address see each other, so at most
/// `lockoutAfter` can be under way or failed (a burst of 1,000 parallel guesses got 411 lookups
/// when failures were only counted afterwards).
struct GuessingProtection: Sendable {
    let slowdownAfter: Int
    let rule: RateRule
    let lockout: Duration
    let now: @Sendable () -> Date
    private let limiter = RateLimiter()
    private let lockouts = Lockouts()

    init(slowdownAfter: Int, lockoutAfter: Int, window: Duration, lockout: Duration, now: @escaping @Sendable () -> Date) {
        self.slowdownAfter = slowdownAfter
        rule = RateRule(name: "registration.fail.address", limit: lockoutAfter, window: window)
        self.lockout = lockout
        self.now = now
    }

    /// Refuses a locked address with 429, counts this attempt, and delays an address with many
    /// recent failures. After it, exactly one of ``recordSuccess(address:on:)`` and
    /// ``recordFailure(address:on:)`` must follow.
    func admit(address: String, on db: any Database) async throws {
        try await checkAndDelay(address: address, on: db)
        let time = now()
        if try await limiter.record(rule, key: address, at: time, on: db) > rule.limit {
            // As many guesses under way or failed as an address may have: this one is refused,
            // and so is the address, as after the last allowed failure.
            try await limiter.unrecord(rule, key: address, at: time, on: db)
            try await lockouts.lock(scope: "registration", key: address, until: time.addingTimeInterval(lockout.seconds), on: db)
            throw Self.refusal(retryAfter: lockout.seconds)
        }
    }

    /// The lock check and the delay alone, counting nothing: what a dummy request does, so that
    /// it takes as long as a real one from the same address (and is refused like one).
    @discardableResult
    func checkAndDelay(address: String, on db: any Database) async throws -> Int {
        let time = now()
        let (lockedUntil, failures) = try await lockouts.lockAndCount(scope: "registration", key: address, counting: rule, at: time, on: db)
        if let until = lockedUntil {
            throw Self.refusal(retryAfter: until.timeIntervalSince(time))
        }
        if failures >= slowdownAfter {
            try await Task.sleep(for: .milliseconds(min(2000, 250 * (failures - slowdownAfter + 1))))
        }
        return failures
    }

    private static func refusal(retryAfter seconds: TimeInterval) -> HTTPError {
        HTTPError(.tooManyRequests, headers: [.retryAfter: String(max(1, Int(seconds)))],
                  message: "too many invalid teleTANs from this address")
    }

    /// The admitted teleTAN was valid: its attempt is given back.
    func recordSuccess(address: String, on db: any Database) async throws {
        try await limiter.unrecord(rule, key: address, at: now(), on: db)
    }

    /// The admitted teleTAN was invalid (already counted at admission); locks at the limit.
    func recordFailure(address: String, on db: any Database) async throws {
        let time = now()
        if try await limiter.count(rule, key: address, at: time, on: db) >= rule.limit {
            try await lockouts.lock(scope: "registration", key: address, until: time.addingTimeInterval(lockout.seconds), on: db)
            try await limiter.reset(rule, key: address, on: db)
        }
    }
}

extension Duration {
    var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
