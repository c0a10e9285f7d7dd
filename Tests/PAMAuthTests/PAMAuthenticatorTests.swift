import Crypto
import Foundation
import Logging
import TestSupport
import XCTest
@testable import PAMAuth

/// Runs the wrapper against the real PAM test stack that scripts/install-pam-stack.sh installs
/// (pam_unix accounts and a pam_oath one-time-password service). CI sets PORTAL_PAM_TESTS=1;
/// elsewhere, without the stack, these tests are skipped rather than faked.
final class PAMAuthenticatorTests: XCTestCase {
    static let service = "teletan-portal-test"
    static let otpService = "teletan-portal-otp-test"

    override func setUpWithError() throws {
        let required = ProcessInfo.processInfo.environment["PORTAL_PAM_TESTS"] == "1"
        let installed = FileManager.default.fileExists(atPath: "/etc/pam.d/\(Self.service)")
        if !installed {
            if required { XCTFail("PORTAL_PAM_TESTS=1 but the PAM test stack is not installed (scripts/install-pam-stack.sh)") }
            throw XCTSkip("PAM test stack not installed; run scripts/install-pam-stack.sh as root")
        }
    }

    private func authenticator(service: String = service, threads: Int = 4) -> PAMAuthenticator {
        PAMAuthenticator(configuration: PAMConfiguration(service: service, threads: threads, promptTimeout: .seconds(30)),
                         logger: Logger(label: "pam-tests"))
    }

    func testCorrectPasswordSucceeds() async throws {
        let pam = authenticator()
        let outcome = await pam.authenticate(username: "tt-officer", password: SecretBytes("Officer-Pass-1"))
        XCTAssertEqual(outcome, .success(username: "tt-officer"))
        await pam.shutdown()
    }

    func testWrongPasswordAndUnknownUserLookTheSame() async throws {
        let pam = authenticator()
        let wrong = await pam.authenticate(username: "tt-officer", password: SecretBytes("not-the-password"))
        let unknown = await pam.authenticate(username: "tt-nobody-\(UUID().uuidString.prefix(8))", password: SecretBytes("whatever"))
        XCTAssertEqual(wrong, .failure(.authenticationFailed))
        XCTAssertEqual(unknown, .failure(.authenticationFailed))
        await pam.shutdown()
    }

    /// pam_end unloads a service's modules; pam_sss then leaves a thread-exit destructor behind in
    /// unmapped code (SSSD issue 6505) and the portal crashes when its PAM threads end. The
    /// modules must stay loaded after the transaction (the SSSD crash itself: Tests/directory).
    func testPAMModulesStayLoadedAfterTheTransactionEnds() async throws {
        let pam = authenticator(service: Self.otpService)
        let outcome = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"))
        guard case .challenge(let challenge) = outcome else { return XCTFail("expected the OTP prompt, got \(outcome)") }
        await pam.cancel(challenge.conversationID)  // pam_end has run
        for module in ["/pam_unix.so", "/pam_oath.so"] {
            let path = try XCTUnwrap(LoadedModules.loadedObjectPaths().first { $0.hasSuffix(module) }, "\(module) was unloaded")
            XCTAssertTrue(pam.keepsLoaded(path), path)
        }
        await pam.shutdown()
    }

    func testTheCanonicalNameIsTheAccountsOwnSpellingThroughNSS() {
        XCTAssertEqual(AccountName.canonical("tt-officer"), "tt-officer")
        XCTAssertEqual(AccountName.canonical("root"), "root")
        XCTAssertNil(AccountName.canonical("tt-nobody-\(UUID().uuidString.prefix(8))"))
    }

    func testPAMErrorsHaveNames() {
        XCTAssertEqual(PAMErrorName.of(PAMErrorName.authinfoUnavailable), "authinfo_unavailable")
        XCTAssertEqual(PAMFailure.systemError(code: 9).errorName, "authinfo_unavailable")
        XCTAssertEqual(PAMErrorName.of(4), "system_error")
        XCTAssertEqual(PAMErrorName.of(999), "pam_error_999")
        XCTAssertNil(PAMFailure.authenticationFailed.errorName)
    }

    func testExpiredAccountIsRefusedByAccountManagement() async throws {
        let pam = authenticator()
        let outcome = await pam.authenticate(username: "tt-expired", password: SecretBytes("Expired-Pass-1"))
        XCTAssertEqual(outcome, .failure(.accountRefused), "pam_acct_mgmt must run after a successful pam_authenticate")
        await pam.shutdown()
    }

    func testUnacceptableUsernamesNeverReachPAM() async throws {
        let pam = authenticator()
        for username in ["", "bad\nname", String(repeating: "a", count: 300)] {
            let outcome = await pam.authenticate(username: username, password: SecretBytes("x"))
            XCTAssertEqual(outcome, .failure(.authenticationFailed))
        }
        await pam.shutdown()
    }

    func testPasswordThenOneTimeCodeAsTwoSteps() async throws {
        let pam = authenticator(service: Self.otpService)
        let first = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"))
        guard case .challenge(let challenge) = first else { return XCTFail("expected an OTP prompt, got \(first)") }
        XCTAssertEqual(challenge.phase, .authentication)
        XCTAssertTrue(challenge.prompt.lowercased().contains("one-time password"), challenge.prompt)
        XCTAssertEqual(pam.waitingConversations, 1)

        let (username, outcome) = await pam.answer(challenge.conversationID, with: [SecretBytes(try OATH.nextCode(for: "tt-otp"))])
        XCTAssertEqual(username, "tt-otp")
        XCTAssertEqual(outcome, .success(username: "tt-otp"))
        XCTAssertEqual(pam.waitingConversations, 0)

        // A step can be answered once only.
        let (_, replay) = await pam.answer(challenge.conversationID, with: [SecretBytes("000000")])
        XCTAssertEqual(replay, .failure(.conversationExpired))
        await pam.shutdown()
    }

    func testWrongOneTimeCodeFails() async throws {
        let pam = authenticator(service: Self.otpService)
        guard case .challenge(let challenge) = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1")) else {
            return XCTFail("expected an OTP prompt")
        }
        let (_, outcome) = await pam.answer(challenge.conversationID, with: [SecretBytes("12345")])
        XCTAssertEqual(outcome, .failure(.authenticationFailed))
        await pam.shutdown()
    }

    func testWrongPasswordNeverReachesTheCodePrompt() async throws {
        let pam = authenticator(service: Self.otpService)
        let outcome = await pam.authenticate(username: "tt-otp", password: SecretBytes("wrong"))
        // pam_unix fails first; pam_oath may still ask (stacks differ), but it must not succeed.
        if case .challenge(let challenge) = outcome {
            let (_, final) = await pam.answer(challenge.conversationID, with: [SecretBytes(try OATH.nextCode(for: "tt-otp"))])
            XCTAssertEqual(final, .failure(.authenticationFailed))
        } else {
            XCTAssertEqual(outcome, .failure(.authenticationFailed))
        }
        await pam.shutdown()
    }

    func testExpiredPasswordIsChangedThroughChauthtok() async throws {
        try Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange")
        defer { try? Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange") }
        let pam = authenticator()
        let first = await pam.authenticate(username: "tt-pwchange", password: SecretBytes("Change-Pass-1"))
        guard case .challenge(let challenge) = first else { return XCTFail("expected a password change, got \(first)") }
        XCTAssertEqual(challenge.phase, .passwordChange)

        let newPassword = "Quite-New-Pass-\(Int.random(in: 1000...9999))"
        let (_, outcome) = await pam.answer(challenge.conversationID, with: [SecretBytes(newPassword), SecretBytes(newPassword)])
        XCTAssertEqual(outcome, .success(username: "tt-pwchange"))
        let again = await pam.authenticate(username: "tt-pwchange", password: SecretBytes(newPassword))
        XCTAssertEqual(again, .success(username: "tt-pwchange"), "the new password works and is no longer expired")
        await pam.shutdown()
    }

    func testMismatchedNewPasswordsFailTheChange() async throws {
        try Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange")
        let pam = authenticator()
        guard case .challenge(let challenge) = await pam.authenticate(username: "tt-pwchange", password: SecretBytes("Change-Pass-1")) else {
            return XCTFail("expected a password change")
        }
        let (_, outcome) = await pam.answer(challenge.conversationID, with: [SecretBytes("Quite-New-Pass-1a"), SecretBytes("Different-Pass-2b")])
        guard case .failure(.passwordChangeFailed) = outcome else { return XCTFail("expected a failed change, got \(outcome)") }
        await pam.shutdown()
    }

    func testBoundedPoolRefusesInsteadOfQueueing() async throws {
        let pam = authenticator(service: Self.otpService, threads: 1)
        guard case .challenge(let challenge) = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1")) else {
            return XCTFail("expected an OTP prompt")
        }
        // The only thread waits for the code: a second sign-in is told to come back, not queued.
        let second = await pam.authenticate(username: "tt-officer", password: SecretBytes("Officer-Pass-1"))
        XCTAssertEqual(second, .failure(.busy))
        // Once the waiting sign-in is abandoned, its thread is free again, at once.
        await pam.cancel(challenge.conversationID)
        let third = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"))
        guard case .challenge(let next) = third else { return XCTFail("expected the thread to be free, got \(third)") }
        await pam.cancel(next.conversationID)
        await pam.shutdown()
    }

    func testOneAddressCannotHoldEveryThread() async throws {
        let pam = authenticator(service: Self.otpService, threads: 16)
        var waiting: [String] = []
        XCTAssertEqual(pam.maxInProgressPerHost, 4, "a quarter of the threads")
        for _ in 0..<pam.maxInProgressPerHost {
            guard case .challenge(let challenge) = await pam.authenticate(
                username: "tt-otp", password: SecretBytes("Otp-Pass-1"), remoteHost: "203.0.113.5") else {
                return XCTFail("expected an OTP prompt")
            }
            waiting.append(challenge.conversationID)
        }
        let oneMore = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"), remoteHost: "203.0.113.5")
        XCTAssertEqual(oneMore, .failure(.busy))
        let elsewhere = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"), remoteHost: "198.51.100.1")
        guard case .challenge(let other) = elsewhere else { return XCTFail("another address is not affected, got \(elsewhere)") }
        // Starting again (the portal cancels the previous conversation first) finds the address's
        // slot free at once.
        await pam.cancel(waiting.removeFirst())
        let restarted = await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"), remoteHost: "203.0.113.5")
        guard case .challenge(let again) = restarted else { return XCTFail("expected the slot to be free, got \(restarted)") }
        for id in waiting + [other.conversationID, again.conversationID] { await pam.cancel(id) }
        await pam.shutdown()
    }

    func testParallelSignInsFromOneAddressAreCountedAtAdmission() async throws {
        let pam = authenticator(service: Self.otpService, threads: 8)
        let outcomes = await withTaskGroup(of: PAMOutcome.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await pam.authenticate(username: "tt-otp", password: SecretBytes("Otp-Pass-1"), remoteHost: "203.0.113.6")
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let challenges = outcomes.compactMap { outcome -> String? in
            if case .challenge(let challenge) = outcome { return challenge.conversationID } else { return nil }
        }
        XCTAssertEqual(challenges.count, pam.maxInProgressPerHost, "\(outcomes)")
        XCTAssertEqual(outcomes.filter { $0 == .failure(.busy) }.count, 8 - pam.maxInProgressPerHost)
        for id in challenges { await pam.cancel(id) }
        await pam.shutdown()
    }

    func testAPromptTimeoutAbandonsTheWholeConversation() async throws {
        let bridge = ConversationBridge()
        let challenge = PAMChallenge(conversationID: "c", phase: .authentication, prompt: "Code: ", echo: true, messages: [])
        let started = Date()
        let first = await Task.detached { bridge.ask(challenge, timeout: .seconds(1)) }.value
        XCTAssertNil(first)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.9)
        let shown = await bridge.nextOutcome(timeout: .seconds(1))
        XCTAssertEqual(shown, .challenge(challenge), "the first prompt was shown")
        // A module that asks again gets no answer, at once, and no second prompt is shown:
        // a late answer cannot reach a question the person never saw.
        bridge.provide([SecretBytes("123456")])
        let again = ContinuousClock.now
        let second = await Task.detached { bridge.ask(challenge, timeout: .seconds(30)) }.value
        XCTAssertNil(second)
        XCTAssertLessThan(ContinuousClock.now - again, .seconds(10), "not the 30 s prompt timeout")
        bridge.deliver(.failure(.authenticationFailed))
        let final = await bridge.nextOutcome(timeout: .seconds(1))
        XCTAssertEqual(final, .failure(.authenticationFailed), "no stale challenge was left behind")
    }

    func testGroupsComeFromNSS() throws {
        XCTAssertTrue(UnixGroups.names(of: "tt-officer").contains("teletan-officer"))
        XCTAssertFalse(UnixGroups.names(of: "tt-norole").contains("teletan-officer"))
        XCTAssertEqual(UnixGroups.names(of: "tt-nobody-at-all"), [])
        // A group whose entry does not fit the first buffer (12,000 members, install-pam-stack.sh).
        XCTAssertTrue(UnixGroups.names(of: "tt-hotline").contains("teletan-wide-test"))
        XCTAssertTrue(UnixGroups.names(of: "tt-hotline").contains("teletan-hotline"))
    }
}

/// HOTP (RFC 4226) for the pam_oath test token, reading the counter pam_oath keeps.
enum OATH {
    static let secretHex = "3132333435363738393031323334353637383930"
    static let usersFile = "/var/lib/teletan-portal-test/users.oath"

    static func nextCode(for user: String) throws -> String {
        let line = try String(contentsOfFile: usersFile, encoding: .utf8)
            .split(separator: "\n").first { $0.split(whereSeparator: \.isWhitespace).dropFirst().first == Substring(user) }
        let fields = line?.split(whereSeparator: \.isWhitespace) ?? []
        // No counter yet: the next code is for 0; otherwise for the stored counter + 1.
        let counter = fields.count > 4 ? (UInt64(fields[4]) ?? 0) + 1 : 0
        return hotp(counter: counter)
    }

    static func hotp(counter: UInt64) -> String {
        var key = [UInt8]()
        var index = secretHex.startIndex
        while index < secretHex.endIndex {
            let next = secretHex.index(index, offsetBy: 2)
            key.append(UInt8(secretHex[index..<next], radix: 16)!)
            index = next
        }
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}
