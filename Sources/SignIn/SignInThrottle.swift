import AccessControl
import FluentKit
import Foundation
import Storage

/// Slows down password guessing. After `failuresPerUser` failures for one username within the
/// window, that username is refused for the lockout time without asking PAM. Failures from one
/// address over all usernames have a much higher limit, so a spray over many usernames is
/// stopped while one person's typos never lock out an office behind one NAT address. An address
/// counts under its ``AddressKey``: an IPv6 address under its /64.
///
/// A username's attempt is counted when it is admitted, before PAM is asked, not when PAM has
/// answered: parallel attempts (PAM takes seconds to refuse a password) therefore see each other,
/// and at most `failuresPerUser` can be under way or failed within the window, on all instances
/// together. An attempt that ends without a verdict on the password (PAM busy or unreachable) is
/// given back; a sign-in resets the count.
package struct SignInThrottle: Sendable {
    package enum Verdict: Equatable {
        case allowed
        case userLocked
        case addressLocked
    }

    package let userRule: RateRule
    let addressRule: RateRule
    let lockout: Duration
    private let limiter = RateLimiter()
    private let lockouts = Lockouts()

    init(failuresPerUser: Int, failuresPerAddress: Int, window: Duration, lockout: Duration) {
        userRule = RateRule(name: "signin.fail.user", limit: failuresPerUser, window: window)
        addressRule = RateRule(name: "signin.fail.address", limit: failuresPerAddress, window: window)
        self.lockout = lockout
    }

    /// Counts the attempt for the username, then checks the locks; a refused attempt is taken
    /// back. A username with as many attempts under way or failed as it may have is refused like a
    /// locked one.
    ///
    /// Counting comes first: a failure that locks the name writes the lock before it resets the
    /// count, so an attempt counted after the reset reads the lock, and one counted before it was
    /// part of the count that reached the limit. (Reading the locks first let an attempt that saw
    /// "no lock" and counted itself after the reset through: 17 of 20 parallel attempts on one
    /// name were admitted in a test.)
    package func admit(username: String, address: String?, now: Date, on db: any Database) async throws -> Verdict {
        // A name or address locked already is refused with reads only: a storm against locks
        // writes nothing but the locks' refusal counters. (Only admission needs the order below.)
        let locked = try await check(username: username, address: address, now: now, on: db)
        guard locked == .allowed else { return locked }
        let key = Self.key(username)
        let attempts = try await limiter.record(userRule, key: key, at: now, on: db)
        var verdict = try await check(username: username, address: address, now: now, on: db)
        if verdict == .allowed, attempts > userRule.limit { verdict = .userLocked }
        if verdict != .allowed {
            try await limiter.unrecord(userRule, key: key, at: now, on: db)
        }
        return verdict
    }

    package func check(username: String, address: String?, now: Date, on db: any Database) async throws -> Verdict {
        if try await lockouts.lockedUntil(scope: "user", key: Self.key(username), now: now, on: db) != nil {
            return .userLocked
        }
        if let address, try await lockouts.lockedUntil(scope: "address", key: AddressKey.of(address), now: now, on: db) != nil {
            return .addressLocked
        }
        return .allowed
    }

    /// Counts an attempt refused by `verdict` against the lock that refused it. True when the audit
    /// trail should record this attempt on its own: the first one a lock refuses (the rest are
    /// summed up in one entry when the lock ends), or a refusal with no lock row behind it (a name
    /// with as many attempts under way as it may have).
    package func countRefusal(_ verdict: Verdict, username: String, address: String?, now: Date, on db: any Database) async throws -> Bool {
        let refused: Int?
        switch verdict {
        case .allowed: return true
        case .userLocked: refused = try await lockouts.refuse(scope: "user", key: Self.key(username), now: now, on: db)
        case .addressLocked:
            guard let address else { return true }
            refused = try await lockouts.refuse(scope: "address", key: AddressKey.of(address), now: now, on: db)
        }
        return (refused ?? 1) == 1
    }

    /// The admitted attempt failed (it was counted for the username at admission).
    package func recordFailure(username: String, address: String?, now: Date, on db: any Database) async throws {
        let until = now.addingTimeInterval(lockout.seconds)
        let key = Self.key(username)
        if try await limiter.count(userRule, key: key, at: now, on: db) >= userRule.limit {
            try await lockouts.lock(scope: "user", key: key, until: until, now: now, on: db)
            try await limiter.reset(userRule, key: key, on: db)
        }
        if let address {
            let key = AddressKey.of(address)
            if try await limiter.record(addressRule, key: key, at: now, on: db) >= addressRule.limit {
                try await lockouts.lock(scope: "address", key: key, until: until, now: now, on: db)
                try await limiter.reset(addressRule, key: key, on: db)
            }
        }
    }

    /// The admitted attempt ended without a verdict on the password: it does not count.
    package func giveBack(username: String, now: Date, on db: any Database) async throws {
        try await limiter.unrecord(userRule, key: Self.key(username), at: now, on: db)
    }

    /// Resets the count of the name typed and of the name PAM signed in (they may differ, e.g.
    /// `alice@example.org` and `alice` with SSSD).
    package func recordSuccess(typed: String, signedIn: String, on db: any Database) async throws {
        for key in Set([Self.key(typed), Self.key(signedIn)]) {
            try await limiter.reset(userRule, key: key, on: db)
        }
    }

    /// Every spelling of one account shares a counter: `Alice`, `alice` and `alice@example.org`.
    static func key(_ username: String) -> String {
        AccountKey.of(username)
    }
}
