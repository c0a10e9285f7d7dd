import FluentKit
import Foundation
import Storage

/// Slows down password guessing. After `failuresPerUser` failures for one username within the
/// window, that username is refused for the lockout time without asking PAM. Failures from one
/// address over all usernames have a much higher limit, so a spray over many usernames is
/// stopped while one person's typos never lock out an office behind one NAT address.
struct SignInThrottle: Sendable {
    enum Verdict: Equatable {
        case allowed
        case userLocked
        case addressLocked
    }

    let userRule: RateRule
    let addressRule: RateRule
    let lockout: Duration
    private let limiter = RateLimiter()
    private let lockouts = Lockouts()

    init(failuresPerUser: Int, failuresPerAddress: Int, window: Duration, lockout: Duration) {
        userRule = RateRule(name: "signin.fail.user", limit: failuresPerUser, window: window)
        addressRule = RateRule(name: "signin.fail.address", limit: failuresPerAddress, window: window)
        self.lockout = lockout
    }

    func check(username: String, address: String?, now: Date, on db: any Database) async throws -> Verdict {
        if try await lockouts.lockedUntil(scope: "user", key: Self.key(username), now: now, on: db) != nil {
            return .userLocked
        }
        if let address, try await lockouts.lockedUntil(scope: "address", key: address, now: now, on: db) != nil {
            return .addressLocked
        }
        return .allowed
    }

    func recordFailure(username: String, address: String?, now: Date, on db: any Database) async throws {
        let until = now.addingTimeInterval(lockout.seconds)
        let key = Self.key(username)
        if try await limiter.record(userRule, key: key, at: now, on: db) >= userRule.limit {
            try await lockouts.lock(scope: "user", key: key, until: until, on: db)
            try await limiter.reset(userRule, key: key, on: db)
        }
        if let address, try await limiter.record(addressRule, key: address, at: now, on: db) >= addressRule.limit {
            try await lockouts.lock(scope: "address", key: address, until: until, on: db)
            try await limiter.reset(addressRule, key: address, on: db)
        }
    }

    func recordSuccess(username: String, on db: any Database) async throws {
        try await limiter.reset(userRule, key: Self.key(username), on: db)
    }

    /// Usernames are compared case-insensitively: `Alice` and `alice` share one counter.
    static func key(_ username: String) -> String {
        username.lowercased()
    }
}
