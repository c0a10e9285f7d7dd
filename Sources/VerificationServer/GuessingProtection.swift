import FluentKit
import Foundation
import Hummingbird
import Storage

/// Slows down, then refuses, an address that keeps presenting invalid teleTANs to
/// `/registrationToken`. Counts live in the database (shared by instances); other addresses are
/// not affected.
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

    /// Refuses a locked address with 429; delays one with many recent failures.
    func checkAllowed(address: String, on db: any Database) async throws {
        let time = now()
        let (lockedUntil, failures) = try await lockouts.lockAndCount(scope: "registration", key: address, counting: rule, at: time, on: db)
        if let until = lockedUntil {
            throw HTTPError(.tooManyRequests, headers: [.retryAfter: String(max(1, Int(until.timeIntervalSince(time))))],
                            message: "too many invalid teleTANs from this address")
        }
        if failures >= slowdownAfter {
            try await Task.sleep(for: .milliseconds(min(2000, 250 * (failures - slowdownAfter + 1))))
        }
    }

    func recordFailure(address: String, on db: any Database) async throws {
        let time = now()
        if try await limiter.record(rule, key: address, at: time, on: db) >= rule.limit {
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
