import Foundation
import PAMAuth
import Storage
import TestSupport
import XCTest
@testable import Portal
@testable import SignIn

/// The sign-in rules on their own, without HTTP or PAM (the sign-in tests through the PAM test
/// stack cover the pages): what is put to PAM, when a name is locked, whether a waiting
/// conversation takes its next step, and what each failure counts.
final class SignInPolicyTests: XCTestCase {
    func testANameIsLockedAfterItsWrongPasswordsForEverySpellingAndItsWaitingConversations() async throws {
        try await PortalHarness.run(configure: { $0.signInFailuresPerUser = 3 }) { portal in
            let policy = portal.portal.signIn.policy
            let guesser = SignInPolicy.Attempt(username: "tt-guess", address: "203.0.113.5", requestID: "r1")
            for _ in 0..<3 {
                let admitted = try await policy.admit(guesser, password: "wrong", on: portal.db)
                XCTAssertEqual(admitted, .admitted)
                try await policy.recordFailure(guesser, reason: "authentication_failed", ending: .failed, on: portal.db)
            }
            // Locked now, even for the right password; the first refusal gets its own audit entry.
            let first = try await policy.admit(guesser, password: "right", on: portal.db)
            XCTAssertEqual(first, .locked(ownEntry: true))
            let second = try await policy.admit(guesser, password: "right", on: portal.db)
            XCTAssertEqual(second, .locked(ownEntry: false))
            // Another spelling of the account from another address shares the lock.
            let other = SignInPolicy.Attempt(username: "TT-Guess@example.org", address: "203.0.113.6", requestID: "r2")
            let otherSpelling = try await policy.admit(other, password: "right", on: portal.db)
            XCTAssertEqual(otherSpelling, .locked(ownEntry: false))
            // A conversation of the locked name that waits for its one-time code ends.
            let step = try await policy.nextStep(of: "tt-guess", typed: ["123456"], address: nil, on: portal.db)
            XCTAssertEqual(step, .end(reason: "throttled"))
            let failures = try await portal.auditActions("signin").filter { $0.outcome == "failure" }
            XCTAssertEqual(failures.count, 3)
            XCTAssertEqual(failures.first?.actor, "tt-guess")

            // The lock ends after its time; then the name is put to PAM again.
            portal.clock.advance(seconds: 15 * 60 + 1)
            let later = try await policy.admit(guesser, password: "right", on: portal.db)
            XCTAssertEqual(later, .admitted)
        }
    }

    /// One host usually owns a whole IPv6 /64 (issue 28, item 5): counted per address, it could
    /// take a fresh address for every guess. The address lock counts an IPv6 address under its /64,
    /// an IPv4 address (also written as IPv4-mapped IPv6) under itself.
    func testIPv6AddressesOfOneSlash64ShareTheAddressLock() async throws {
        try await PortalHarness.run(configure: { $0.signInFailuresPerAddress = 3 }) { portal in
            let policy = portal.portal.signIn.policy
            for (index, address) in ["2001:db8:5:6::1", "2001:db8:5:6:ffff::2", "2001:DB8:5:6:0:0:0:3"].enumerated() {
                let attempt = SignInPolicy.Attempt(username: "tt-spray-\(index)", address: address, requestID: nil)
                let admitted = try await policy.admit(attempt, password: "wrong", on: portal.db)
                XCTAssertEqual(admitted, .admitted)
                try await policy.recordFailure(attempt, reason: "authentication_failed", ending: .failed, on: portal.db)
            }
            for address in ["2001:db8:5:6:abcd::9", "2001:0db8:0005:0006:0000:0000:0000:0001"] {
                let next = SignInPolicy.Attempt(username: "tt-spray-next", address: address, requestID: nil)
                let locked = try await policy.admit(next, password: "wrong", on: portal.db)
                XCTAssertNotEqual(locked, .admitted, "another address of the locked /64: \(address)")
            }
            let neighbour = SignInPolicy.Attempt(username: "tt-spray-next", address: "2001:db8:5:7::1", requestID: nil)
            let admitted = try await policy.admit(neighbour, password: "wrong", on: portal.db)
            XCTAssertEqual(admitted, .admitted, "the next /64 is another host's")
            let locks = try await Lockouts().active(scopes: ["address"], now: portal.clock.now, on: portal.db)
            XCTAssertEqual(locks.map(\.key), ["2001:db8:5:6::/64"])
        }
        try await PortalHarness.run(configure: { $0.signInFailuresPerAddress = 2 }) { portal in
            let policy = portal.portal.signIn.policy
            for (index, address) in ["192.0.2.7", "::ffff:192.0.2.7"].enumerated() {
                let attempt = SignInPolicy.Attempt(username: "tt-v4-\(index)", address: address, requestID: nil)
                _ = try await policy.admit(attempt, password: "wrong", on: portal.db)
                try await policy.recordFailure(attempt, reason: "authentication_failed", ending: .failed, on: portal.db)
            }
            let sameHost = SignInPolicy.Attempt(username: "tt-v4-next", address: "192.0.2.7", requestID: nil)
            let locked = try await policy.admit(sameHost, password: "wrong", on: portal.db)
            XCTAssertNotEqual(locked, .admitted, "IPv4-mapped IPv6 is the IPv4 address")
            let neighbour = SignInPolicy.Attempt(username: "tt-v4-next", address: "192.0.2.8", requestID: nil)
            let admitted = try await policy.admit(neighbour, password: "wrong", on: portal.db)
            XCTAssertEqual(admitted, .admitted, "IPv4 stays per address")
        }
    }

    func testOnlyAWrongPasswordCountsTowardsALock() async throws {
        XCTAssertEqual(SignInPolicy.ending(of: .authenticationFailed), .failed)
        for failure: PAMFailure in [.accountRefused, .passwordChangeFailed(messages: []), .timedOut, .busy, .systemError(code: 9)] {
            XCTAssertEqual(SignInPolicy.ending(of: failure), .givenBack, "\(failure)")
        }
        XCTAssertEqual(SignInPolicy.ending(of: .conversationExpired), .settled)
        try await PortalHarness.run(configure: { $0.signInFailuresPerUser = 2 }) { portal in
            let policy = portal.portal.signIn.policy
            let refusedAccount = SignInPolicy.Attempt(username: "tt-expired", address: "203.0.113.7", requestID: nil)
            for _ in 0..<4 {
                let admitted = try await policy.admit(refusedAccount, password: "right", on: portal.db)
                XCTAssertEqual(admitted, .admitted, "an attempt given back does not count")
                try await policy.recordFailure(
                    refusedAccount, reason: "account_refused", ending: SignInPolicy.ending(of: .accountRefused), on: portal.db)
            }
        }
    }

    func testNamesAndPasswordsPAMWouldNotSeeWholeFailWithoutCounting() async throws {
        try await PortalHarness.run(configure: { $0.signInFailuresPerUser = 2 }) { portal in
            let policy = portal.portal.signIn.policy
            let typist = SignInPolicy.Attempt(username: "tt-typist", address: "203.0.113.8", requestID: nil)
            for _ in 0..<3 {
                let refused = try await policy.admit(typist, password: "pass\u{0}word", on: portal.db)
                XCTAssertEqual(refused, .failsLikeWrongPassword)
            }
            for name in ["", String(repeating: "a", count: 257), "tt-\u{7}bell"] {
                let refused = try await policy.admit(
                    SignInPolicy.Attempt(username: name, address: "203.0.113.8", requestID: nil), password: "x", on: portal.db)
                XCTAssertEqual(refused, .failsLikeWrongPassword, name)
            }
            // Audited like a wrong password, but nothing was counted for the name.
            let reasons = try await portal.auditActions("signin").map { $0.details }
            XCTAssertEqual(reasons.count, 6)
            XCTAssertTrue(reasons.allSatisfy { $0.contains("authentication_failed") }, "\(reasons)")
            let admitted = try await policy.admit(typist, password: "password", on: portal.db)
            XCTAssertEqual(admitted, .admitted)

            // A step with a NUL byte ends the conversation; a clean one goes on.
            let nul = try await policy.nextStep(of: "tt-typist", typed: ["12\u{0}34"], address: nil, on: portal.db)
            XCTAssertEqual(nul, .end(reason: "authentication_failed"))
            let clean = try await policy.nextStep(of: "tt-typist", typed: ["1234"], address: nil, on: portal.db)
            XCTAssertEqual(clean, .proceed)
        }
    }
}
