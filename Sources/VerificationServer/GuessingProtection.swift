import FluentKit
import Foundation
import Hummingbird
import Storage
import Synchronization

/// Slows down, then refuses, an address that keeps presenting invalid teleTANs to
/// `/registrationToken`. Failures and locks live in the database (shared by instances); other
/// addresses are not affected.
///
/// Lookups under way are counted too, per instance and in memory (a concurrency guard, like the
/// PAM pool's per-address cap, that costs no statement on the hot path): an address may have
/// failures + lookups under way up to the limit, so concurrent guesses see each other. At most
/// `lockoutAfter` guesses can then fail per instance before the lock (a burst of 1,000 parallel
/// guesses got 411 lookups when only failures were counted). A valid teleTAN never counts as a
/// failure, and a burst of valid redemptions from one address (a carrier NAT) is at worst told
/// to retry in a second, never locked.
struct GuessingProtection: Sendable {
    let slowdownAfter: Int
    let rule: RateRule
    let lockout: Duration
    let now: @Sendable () -> Date
    private let underWay = LookupsUnderWay()
    private let limiter = RateLimiter()
    private let lockouts = Lockouts()

    init(slowdownAfter: Int, lockoutAfter: Int, window: Duration, lockout: Duration, now: @escaping @Sendable () -> Date) {
        self.slowdownAfter = slowdownAfter
        rule = RateRule(name: "registration.fail.address", limit: lockoutAfter, window: window)
        self.lockout = lockout
        self.now = now
    }

    /// Refuses a locked address with 429, delays an address with many recent failures, and
    /// counts this lookup as under way. After it, exactly one of ``endLookup(address:)``
    /// and ``recordFailure(address:on:)`` must follow.
    ///
    /// The lookup is counted *before* the failures are read: a lookup that ended before the read
    /// has its failure in the count read, and one still under way is in the in-memory count, so
    /// failures + lookups under way never pass the limit however the requests interleave (counting
    /// after the read let a request with a stale count through: 13 of 60 parallel guesses reached
    /// the lookup with a limit of 10). Counting both at once only errs on the side of refusing.
    func admit(address: String, on db: any Database) async throws {
        let underWayWithThis = underWay.enter(address)
        do {
            let failures = try await checkAndDelay(address: address, on: db)
            guard failures + underWayWithThis <= rule.limit else {
                // As many lookups under way as could still fail before the lock: wait for them.
                throw Self.refusal(retryAfter: 1)
            }
        } catch {
            underWay.leave(address)
            throw error
        }
    }

    /// The lock check and the delay alone, counting nothing: what a dummy request does, so that
    /// it takes as long as a real one from the same address (and is refused like one). Returns
    /// the address's recent failures.
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

    /// The admitted lookup found a valid teleTAN, or ended without a verdict: no failure.
    func endLookup(address: String) {
        underWay.leave(address)
    }

    /// The admitted lookup found no valid teleTAN: a failure; locks the address at the limit.
    func recordFailure(address: String, on db: any Database) async throws {
        defer { underWay.leave(address) }
        let time = now()
        if try await limiter.record(rule, key: address, at: time, on: db) >= rule.limit {
            try await lockouts.lock(scope: "registration", key: address, until: time.addingTimeInterval(lockout.seconds), now: time, on: db)
            try await limiter.reset(rule, key: address, on: db)
        }
    }
}

/// Lookups under way per address, in this process.
final class LookupsUnderWay: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more lookup for `address`; returns how many are under way, this one included.
    func enter(_ address: String) -> Int {
        counts.withLock { counts in
            counts[address, default: 0] += 1
            return counts[address]!
        }
    }

    func leave(_ address: String) {
        counts.withLock { counts in
            counts[address, default: 1] -= 1
            if counts[address] ?? 0 <= 0 { counts[address] = nil }
        }
    }
}
