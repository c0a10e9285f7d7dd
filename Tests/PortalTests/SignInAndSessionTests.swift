import HTTPTypes
import Storage
import Foundation
import HummingbirdTesting
import TestSupport
import XCTest
@testable import Portal

final class SignInAndSessionTests: XCTestCase {
    /// Every test here signs in through the real PAM test stack.
    override func setUpWithError() throws {
        try PortalHarness.requirePAMStack()
    }

    func testSignInCreatesALaxHttpOnlySessionAndAudits() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let form = try await browser.get("/signin")
            XCTAssertTrue(form.body.contains(">Username<") && form.body.contains(">Password<") && form.body.contains(">Sign in<"))
            let signedIn = try await browser.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": form.hidden("csrf")!])
            XCTAssertEqual(signedIn.status, .seeOther)
            let cookie = try XCTUnwrap(signedIn.headers[values: .setCookie].first { $0.hasPrefix("portal_session=") })
            XCTAssertTrue(cookie.contains("HttpOnly"))
            XCTAssertTrue(cookie.contains("SameSite=Lax"), "links from other sites arrive signed in")
            XCTAssertFalse(cookie.contains("Secure"), "plain HTTP without a TLS proxy")
            let home = try await browser.get("/")
            XCTAssertTrue(home.body.contains("id=\"issue-teletan\""))
            XCTAssertTrue(home.body.contains(">Sign out<"))
            let audits = try await portal.auditActions("signin")
            XCTAssertEqual(audits.map(\.outcome), ["success"])
            XCTAssertEqual(audits.first?.actor, "tt-officer")
            XCTAssertEqual(audits.first?.role, "officer")
            XCTAssertEqual(audits.first?.address, "198.51.100.7")
            let sessionRows = try await portal.count("SELECT COUNT(*) AS n FROM sessions")
            XCTAssertEqual(sessionRows, 1)
        }
    }

    func testFailuresLookTheSameAndNeverRevealTheAccount() async throws {
        try await PortalHarness.run { portal in
            let wrong = try await portal.browser().signIn("tt-officer", "wrong-password")
            let unknown = try await portal.browser().signIn("no-such-user-xyz", "whatever")
            let expired = try await portal.browser().signIn("tt-expired", "Expired-Pass-1")
            for page in [wrong, unknown] {
                XCTAssertEqual(page.status, .unauthorized)
                XCTAssertTrue(page.body.contains("Sign-in failed. Check your username and password, or try again later."))
            }
            // The right password for an account that may not sign in: its own message (issue 19).
            XCTAssertEqual(expired.status, .forbidden)
            XCTAssertTrue(expired.body.contains("Your account cannot sign in right now. Please contact your administrator."))
            // Tokens, request ids and the name typed (kept in the field) aside, the pages are the same.
            let strip = { (page: Browser.Page) in page.body.replacingOccurrences(of: #"value="[^"]*""#, with: "", options: .regularExpression)
                .replacingOccurrences(of: #"<code>[0-9a-f]+</code>"#, with: "", options: .regularExpression) }
            XCTAssertEqual(strip(wrong), strip(unknown))
            // The name stays in the field to be corrected; the password never comes back.
            XCTAssertTrue(wrong.body.contains(#"name="username" value="tt-officer""#))
            XCTAssertFalse(wrong.body.contains("wrong-password"))
            let failures = try await portal.auditActions("signin")
            XCTAssertEqual(failures.map(\.outcome), ["failure", "failure", "failure"])
            XCTAssertEqual(failures.map { $0.detailValues["reason"] }, ["authentication_failed", "authentication_failed", "account_refused"])
            let all = try await portal.auditActions("signin")
            XCTAssertFalse(all.contains { $0.details.contains("wrong-password") || $0.details.contains("Expired-Pass-1") })
        }
    }

    func testSignInAlwaysIssuesANewSessionAndEndsTheOldOne() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            browser.cookies["portal_session"] = String(repeating: "a", count: 64)  // planted by an attacker
            let form = try await browser.get("/signin")
            let csrf = try XCTUnwrap(form.hidden("csrf"))
            _ = try await browser.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": csrf])
            let first = try XCTUnwrap(browser.cookies["portal_session"])
            XCTAssertNotEqual(first, String(repeating: "a", count: 64))
            // Signing in again from a sign-in form still open in another tab.
            _ = try await browser.post("/signin", ["username": "tt-officer", "password": "Officer-Pass-1", "csrf": csrf])
            let second = try XCTUnwrap(browser.cookies["portal_session"])
            XCTAssertNotEqual(first, second)
            let stale = portal.browser()
            stale.cookies["portal_session"] = first
            let page = try await stale.get("/")
            XCTAssertEqual(page.status, .seeOther)
            XCTAssertEqual(page.location, "/signin?expired=1", "a session that is gone reads as expired")
            let sessionRows = try await portal.count("SELECT COUNT(*) AS n FROM sessions")
            XCTAssertEqual(sessionRows, 1)
        }
    }

    func testSignOutEndsTheSessionOnTheServer() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedInThroughPAM(.officer)
            let cookie = try XCTUnwrap(browser.cookies["portal_session"])
            let home = try await browser.get("/")
            let out = try await browser.post("/signout", ["csrf": home.hidden("csrf")!])
            XCTAssertEqual(out.status, .seeOther)
            XCTAssertEqual(out.location, "/signin?signedout=1")
            XCTAssertNil(browser.cookies["portal_session"])
            let notice = try await browser.get("/signin?signedout=1")
            XCTAssertTrue(notice.body.contains("You have signed out."))
            let replay = portal.browser()
            replay.cookies["portal_session"] = cookie
            let page = try await replay.get("/")
            XCTAssertEqual(page.location, "/signin?expired=1")
            let audits = try await portal.auditActions("signout")
            XCTAssertEqual(audits.count, 1)
        }
    }

    func testIdleTimeoutExpiresTheSessionAndIsAudited() async throws {
        try await PortalHarness.run { portal in
            let browser = try await portal.signedInThroughPAM(.officer)
            portal.clock.advance(seconds: 14 * 60)
            let stillThere = try await browser.get("/")
            XCTAssertEqual(stillThere.status, .ok)
            portal.clock.advance(seconds: 16 * 60)
            let expired = try await browser.get("/")
            XCTAssertEqual(expired.status, .seeOther)
            XCTAssertEqual(expired.location, "/signin?expired=1")
            let notice = try await browser.get("/signin?expired=1")
            XCTAssertTrue(notice.body.contains("Your session has expired."))
            let audits = try await portal.auditActions("session.expired")
            XCTAssertEqual(audits.map(\.actor), ["tt-officer"])
        }
    }

    func testAbsoluteLifetimeEndsEvenAnActiveSession() async throws {
        try await PortalHarness.run(configure: { $0.sessionLifetime = .seconds(3600) }) { portal in
            let browser = try await portal.signedInThroughPAM(.officer)
            for _ in 0..<6 {
                portal.clock.advance(seconds: 9 * 60)
                let page = try await browser.get("/")
                XCTAssertEqual(page.status, .ok)
            }
            portal.clock.advance(seconds: 9 * 60)
            let page = try await browser.get("/")
            XCTAssertEqual(page.location, "/signin?expired=1")
        }
    }

    func testCleanupRemovesExpiredSessionsAndAuditsThem() async throws {
        try await PortalHarness.run { portal in
            _ = try await portal.signedInThroughPAM(.officer)
            _ = try await portal.signedInThroughPAM(.hotline)
            portal.clock.advance(seconds: 20 * 60)
            try await portal.portal.runCleanup()
            let sessionRows = try await portal.count("SELECT COUNT(*) AS n FROM sessions")
            XCTAssertEqual(sessionRows, 0)
            let audits = try await portal.auditActions("session.expired")
            XCTAssertEqual(Set(audits.compactMap(\.actor)), ["tt-officer", "tt-hotline"])
        }
    }

    func testARefusedAccountHasItsOwnMessageAndIsNeverCountedAsAWrongPassword() async throws {
        try await PortalHarness.run { portal in
            // More refusals than wrong passwords lock a name (5): none of them counts.
            for _ in 0..<7 {
                let page = try await portal.browser().signIn("tt-expired", "Expired-Pass-1")
                XCTAssertEqual(page.status, .forbidden)
                XCTAssertTrue(page.body.contains("Your account cannot sign in right now."))
            }
            let german = portal.browser()
            german.extraHeaders[.acceptLanguage] = "de"
            let page = try await german.signIn("tt-expired", "Expired-Pass-1")
            XCTAssertTrue(page.body.contains("Ihr Konto kann sich gerade nicht anmelden. Bitte wenden Sie sich an Ihre Administration."))
            let reasons = try await portal.auditActions("signin").map { $0.detailValues["reason"] }
            XCTAssertEqual(reasons, Array(repeating: "account_refused", count: 8))
            // A wrong password still counts: four more do not lock yet, the fifth does.
            for _ in 0..<4 {
                let wrong = try await portal.browser().signIn("tt-expired", "wrong")
                XCTAssertEqual(wrong.status, .unauthorized)
            }
        }
    }

    func testEverySpellingOfANameCountsOnOneLock() async throws {
        try await PortalHarness.run { portal in
            // What SSSD accepts as one person (case_sensitive = false, a domain): one counter.
            for spelling in ["TT-Officer", "tt-officer@example.org", "EXAMPLE\\tt-officer", "Tt-OFFICER@Example.org", "tt-officer"] {
                let page = try await portal.browser().signIn(spelling, "wrong")
                XCTAssertEqual(page.status, .unauthorized, spelling)
            }
            let locked = try await portal.browser().signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(locked.status, .tooManyRequests, "five wrong passwords under five spellings lock the name")
            // Each failure's actor is the name's key; the spelling typed is kept beside it.
            let failures = try await portal.auditActions("signin").filter { $0.detailValues["reason"] == "authentication_failed" }
            XCTAssertEqual(Set(failures.map(\.actor)), ["tt-officer"])
            XCTAssertEqual(failures.compactMap { $0.detailValues["typed"] },
                           ["TT-Officer", "tt-officer@example.org", "EXAMPLE\\tt-officer", "Tt-OFFICER@Example.org"])
        }
    }

    func testTheAdminFindsASignInUnderTheCanonicalNameAndUnderTheSpellingTyped() async throws {
        try await PortalHarness.run { portal in
            _ = try await portal.browser().signIn("TT-Officer@example.org", "wrong")
            _ = try await portal.browser().signIn("tt-officer", "wrong")
            let admin = try await portal.signedInThroughPAM(.admin)
            for query in ["tt-officer", "TT-OFFICER", "tt-officer@example.org", "EXAMPLE%5Ctt-officer"] {
                let page = try await admin.get("/admin/audit?actor=\(query)&action=signin")
                XCTAssertEqual(page.status, .ok, query)
                let rows = page.body.matches(of: /<td class="details" data-details="[^"]*authentication_failed/).count
                XCTAssertEqual(rows, 2, "actor=\(query) finds both failures")
            }
            let other = try await admin.get("/admin/audit?actor=tt-hotline&action=signin")
            XCTAssertFalse(other.body.contains("authentication_failed"))
        }
    }

    func testUsernameThrottlingLocksOnlyThatUsername() async throws {
        try await PortalHarness.run { portal in
            for _ in 0..<5 {
                let page = try await portal.browser().signIn("tt-officer", "wrong")
                XCTAssertEqual(page.status, .unauthorized)
            }
            let locked = try await portal.browser().signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(locked.status, .tooManyRequests, "the right password is refused while locked")
            XCTAssertEqual(locked.headers[.retryAfter], "900")
            XCTAssertTrue(locked.body.contains("Too many failed sign-ins for this name or from this address."))
            let lastReason = try await portal.auditActions("signin").last?.detailValues["reason"]
            XCTAssertEqual(lastReason, "throttled")
            // Same address, other user: not affected.
            let colleague = try await portal.browser().signIn("tt-hotline", "Hotline-Pass-1")
            XCTAssertEqual(colleague.status, .seeOther)
            portal.clock.advance(seconds: 15 * 60 + 1)
            let later = try await portal.browser().signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(later.status, .seeOther)
        }
    }

    func testLockedUsernameIsRefusedWithoutAskingPAM() async throws {
        // The two-step PAM service makes a PAM call visible: the right password gets the
        // one-time-code prompt from PAM, a refusal before PAM gets the generic failure page.
        try await PortalHarness.run(configure: { $0.pamService = "teletan-portal-otp-test" }) { portal in
            let browser = portal.browser()
            let asked = try await browser.signIn("tt-otp", "Otp-Pass-1")
            XCTAssertEqual(asked.status, .ok)
            XCTAssertTrue(asked.body.contains("action=\"/signin/continue\""), "PAM asks for the one-time code")
            // The continuation step checks its CSRF token like every form.
            let forged = try await browser.post("/signin/continue", ["csrf": "forged", "answer": "000000"])
            XCTAssertEqual(forged.status, .forbidden)

            let throttle = portal.portal.signIn.throttle
            let db = portal.portal.database.database(logger: TestDatabases.testLogger)
            // (The waiting conversation above is one attempt under way; four more fail elsewhere.)
            for _ in 0..<4 {
                let verdict = try await throttle.admit(username: "TT-OTP", address: "192.0.2.99", now: portal.clock.now, on: db)
                XCTAssertEqual(verdict, .allowed)
                try await throttle.recordFailure(username: "TT-OTP", address: "192.0.2.99", now: portal.clock.now, on: db)
            }
            // The same browser starts over (which ends its waiting conversation) with the right password.
            let locked = try await browser.signIn("tt-otp", "Otp-Pass-1")
            XCTAssertEqual(locked.status, .tooManyRequests)
            XCTAssertFalse(locked.body.contains("/signin/continue"), "PAM was not asked")
            XCTAssertTrue(locked.body.contains("Too many failed sign-ins for this name or from this address."))
            let lastReason = try await portal.auditActions("signin").last?.detailValues["reason"]
            XCTAssertEqual(lastReason, "throttled")
        }
    }

    func testAttemptsUnderWayCountBeforePAMAnswers() async throws {
        try await PortalHarness.run { portal in
            let throttle = portal.portal.signIn.throttle
            let db = portal.portal.database.database(logger: TestDatabases.testLogger)
            let now = portal.clock.now
            // Five parallel attempts are admitted before any has failed; a sixth is not.
            for _ in 0..<5 {
                let verdict = try await throttle.admit(username: "alice", address: "192.0.2.1", now: now, on: db)
                XCTAssertEqual(verdict, .allowed)
            }
            let sixth = try await throttle.admit(username: "Alice", address: "192.0.2.2", now: now, on: db)
            XCTAssertEqual(sixth, .userLocked)
            // One ends without a verdict (PAM busy): its place is free again.
            try await throttle.giveBack(username: "alice", now: now, on: db)
            let retried = try await throttle.admit(username: "alice", address: "192.0.2.1", now: now, on: db)
            XCTAssertEqual(retried, .allowed)
            // They all fail: the name is locked, and stays locked after the counters reset.
            for _ in 0..<5 {
                try await throttle.recordFailure(username: "alice", address: "192.0.2.1", now: now, on: db)
            }
            let afterwards = try await throttle.admit(username: "alice", address: "192.0.2.1", now: now.addingTimeInterval(60), on: db)
            XCTAssertEqual(afterwards, .userLocked)
            // A sign-in resets the count of the typed and of the signed-in name.
            for _ in 0..<4 {
                _ = try await throttle.admit(username: "bob@example.org", address: "192.0.2.1", now: now, on: db)
            }
            try await throttle.recordSuccess(typed: "bob@example.org", signedIn: "bob", on: db)
            for _ in 0..<5 {
                let verdict = try await throttle.admit(username: "bob@example.org", address: "192.0.2.1", now: now, on: db)
                XCTAssertEqual(verdict, .allowed)
            }
        }
    }

    func testParallelFailingAttemptsNeverGetPastTheLock() async throws {
        try await PortalHarness.run { portal in
            let throttle = portal.portal.signIn.throttle
            let db = portal.portal.database.database(logger: TestDatabases.testLogger)
            let now = portal.clock.now
            // Each attempt is admitted and then fails at once, as PAM would answer; the failure
            // that reaches the limit locks the name and resets its count. However the statements
            // of parallel attempts interleave, no more than the limit may ever be admitted per
            // name (an attempt that read "no lock" before the lock and counted itself after the
            // reset got through when the lock was read first). 20 names, 20 attempts each, spread
            // over 200 ms so that attempts start while others are failing and locking.
            let names = (0..<20).map { "carol\($0)" }
            let admitted = try await withThrowingTaskGroup(of: String?.self) { group in
                for name in names {
                    for _ in 0..<20 {
                        group.addTask {
                            try await Task.sleep(for: .milliseconds(Int.random(in: 0..<200)))
                            guard try await throttle.admit(username: name, address: nil, now: now, on: db) == .allowed else { return nil }
                            try await throttle.recordFailure(username: name, address: nil, now: now, on: db)
                            return name
                        }
                    }
                }
                return try await group.reduce(into: [String: Int]()) { counts, name in
                    if let name { counts[name, default: 0] += 1 }
                }
            }
            XCTAssertEqual(admitted.filter { $0.value > throttle.userRule.limit }, [:], "attempts admitted per name")
            // One at a time afterwards, each name gets at most the rest of its attempts, then the
            // lock (attempts counted while being refused may lock a name early: the safe side).
            for name in names {
                var total = admitted[name, default: 0]
                while try await throttle.admit(username: name, address: nil, now: now.addingTimeInterval(60), on: db) == .allowed {
                    total += 1
                    guard total <= throttle.userRule.limit else { break }
                    try await throttle.recordFailure(username: name, address: nil, now: now.addingTimeInterval(60), on: db)
                }
                XCTAssertLessThanOrEqual(total, throttle.userRule.limit, name)
            }
        }
    }

    func testTheNextStepOfAConversationIsRefusedOnceTheNameIsLocked() async throws {
        try await PortalHarness.run(configure: { $0.pamService = "teletan-portal-otp-test" }) { portal in
            let browser = portal.browser()
            let asked = try await browser.signIn("tt-otp", "Otp-Pass-1")
            XCTAssertTrue(asked.body.contains("action=\"/signin/continue\""))
            XCTAssertEqual(portal.portal.pam.waitingConversations, 1)
            // Meanwhile, failures elsewhere lock the name.
            let throttle = portal.portal.signIn.throttle
            let db = portal.portal.database.database(logger: TestDatabases.testLogger)
            for _ in 0..<5 {
                _ = try await throttle.admit(username: "tt-otp", address: "192.0.2.99", now: portal.clock.now, on: db)
                try await throttle.recordFailure(username: "tt-otp", address: "192.0.2.99", now: portal.clock.now, on: db)
            }
            let step = try await browser.post("/signin/continue", ["csrf": asked.hidden("csrf")!, "answer": "123456"])
            XCTAssertEqual(step.status, .unauthorized)
            XCTAssertTrue(step.body.contains("Sign-in failed. Check your username and password, or try again later."))
            let lastReason = try await portal.auditActions("signin").last?.detailValues["reason"]
            XCTAssertEqual(lastReason, "throttled", "refused before the code reached PAM")
            XCTAssertEqual(portal.portal.pam.waitingConversations, 0, "the conversation was ended")
        }
    }

    func testSignInPageShowsOnlyTheMessagesThatApply() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let plain = try await browser.get("/signin")
            XCTAssertFalse(plain.body.contains("nil"), "an empty message must not print as nil")
            XCTAssertFalse(plain.body.contains("id=\"signin-error\""))
            XCTAssertFalse(plain.body.contains("class=\"notice\""))
            let signedOut = try await browser.get("/signin?signedout=1")
            XCTAssertTrue(signedOut.body.contains("class=\"notice\""))
            XCTAssertFalse(signedOut.body.contains("id=\"signin-error\""))
            XCTAssertFalse(signedOut.body.contains(">nil<"))
            let failed = try await browser.signIn("tt-officer", "wrong")
            XCTAssertTrue(failed.body.contains("id=\"signin-error\""))
            XCTAssertFalse(failed.body.contains("class=\"notice\""))
            XCTAssertFalse(failed.body.contains(">nil<"))
        }
    }

    func testPasswordWithANulByteNeverReachesPAM() async throws {
        try await PortalHarness.run { portal in
            // PAM takes C strings: it would have compared only "Norole-Pass-1" and said yes.
            let page = try await portal.browser().signIn("tt-norole", "Norole-Pass-1\u{0}junk")
            XCTAssertEqual(page.status, .unauthorized)
            let sessions = try await portal.count("SELECT COUNT(*) AS n FROM sessions")
            XCTAssertEqual(sessions, 0)
        }
    }

    func testImpossibleUsernamesFailLikeWrongPasswords() async throws {
        try await PortalHarness.run { portal in
            // One character carrying 1,500 random combining marks: 3,001 bytes in a single Character.
            var generator = SystemRandomNumberGenerator()
            let marks = String(String.UnicodeScalarView((0..<1500).map { _ in
                Unicode.Scalar(UInt32.random(in: 0x300...0x36F, using: &generator))!
            }))
            let names = [String(repeating: "a", count: 5000), "tt-officer\u{7}", String(repeating: "ü", count: 200),
                         "tt-\u{0}officer", "a" + marks]
            for name in names {
                let page = try await portal.browser().signIn(name, "Officer-Pass-1")
                XCTAssertEqual(page.status, .unauthorized, "\(name.count) characters")
                XCTAssertTrue(page.body.contains("Sign-in failed. Check your username and password, or try again later."))
            }
            let audits = try await portal.auditActions("signin")
            XCTAssertEqual(audits.count, names.count)
            XCTAssertTrue(audits.allSatisfy { ($0.actor?.utf8.count ?? 0) <= 256 })
            XCTAssertTrue(audits.contains { $0.actor == "tt-?officer" }, "control characters are replaced, not dropped")
        }
    }

    func testForwardedAddressIsIgnoredWithoutTrustProxy() async throws {
        try await PortalHarness.run(configure: { $0.trustProxy = false }) { portal in
            let spoofer = portal.browser(address: "203.0.113.77")
            _ = try await spoofer.signIn("tt-officer", "wrong")
            let signedIn = try await spoofer.signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(signedIn.status, .seeOther)
            let audits = try await portal.auditActions("signin")
            XCTAssertEqual(audits.count, 2)
            XCTAssertFalse(audits.contains { $0.address == "203.0.113.77" }, "a client cannot choose the address audited and throttled")
        }
    }

    func testDefaultLimitsAndTheirWindow() async throws {
        let defaults = PortalConfiguration()
        XCTAssertEqual(defaults.signInFailuresPerUser, 5)
        XCTAssertEqual(defaults.signInFailuresPerAddress, 50)
        XCTAssertEqual(defaults.signInWindow, .seconds(15 * 60))
        XCTAssertEqual(defaults.signInLockout, .seconds(15 * 60))
        try await PortalHarness.run { portal in
            // Failures older than the window do not count: 4 + 4 in two windows lock nothing.
            for _ in 0..<4 { _ = try await portal.browser().signIn("tt-officer", "wrong") }
            portal.clock.advance(seconds: 15 * 60 + 61)
            for _ in 0..<4 { _ = try await portal.browser().signIn("tt-officer", "wrong") }
            let stillOpen = try await portal.browser().signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(stillOpen.status, .seeOther)
            // 49 failures over many names from one address lock nothing; the 50th locks the address.
            let sprayer = "203.0.113.50"
            for index in 0..<49 { _ = try await portal.browser(address: sprayer).signIn("spray-\(index)", "guess") }
            let before = try await portal.browser(address: sprayer).signIn("tt-hotline", "Hotline-Pass-1")
            XCTAssertEqual(before.status, .seeOther, "49 failures do not lock the address")
            _ = try await portal.browser(address: sprayer).signIn("spray-49", "guess")
            let after = try await portal.browser(address: sprayer).signIn("tt-hotline", "Hotline-Pass-1")
            XCTAssertEqual(after.status, .tooManyRequests, "the 50th failure locks the address")
        }
    }

    func testAddressThrottlingStopsASprayButNotOtherAddresses() async throws {
        try await PortalHarness.run(configure: { $0.signInFailuresPerAddress = 3 }) { portal in
            for name in ["spray-a", "spray-b", "spray-c"] {
                _ = try await portal.browser(address: "203.0.113.9").signIn(name, "guess")
            }
            let fromSprayer = try await portal.browser(address: "203.0.113.9").signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(fromSprayer.status, .tooManyRequests)
            let fromOffice = try await portal.browser(address: "198.51.100.20").signIn("tt-officer", "Officer-Pass-1")
            XCTAssertEqual(fromOffice.status, .seeOther)
        }
    }

    func testExpiredPasswordIsChangedInTheSignInForm() async throws {
        try Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange")
        defer { try? Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange") }
        try await PortalHarness.run { portal in
            try Shell.run("/bin/sh", "-c", "echo 'tt-pwchange:Change-Pass-1' | chpasswd && chage -d 0 tt-pwchange")
            let browser = portal.browser()
            let step = try await browser.signIn("tt-pwchange", "Change-Pass-1")
            XCTAssertEqual(step.status, .ok)
            XCTAssertTrue(step.body.contains("Change your password"))
            // pam_unix's own reason, from account management, is shown with the form.
            XCTAssertTrue(step.body.contains("You are required to change your password immediately"), step.body)
            XCTAssertNotNil(browser.cookies["portal_signin"])
            let newPassword = "Brand-New-Pass-\(Int.random(in: 1000...9999))"
            let done = try await browser.post("/signin/continue", [
                "csrf": step.hidden("csrf")!, "new_password": newPassword, "new_password_repeat": newPassword,
            ])
            XCTAssertEqual(done.status, .seeOther)
            XCTAssertEqual(done.location, "/")
            XCTAssertNotNil(browser.cookies["portal_session"])
            // The step cannot be replayed.
            let replay = try await browser.post("/signin/continue", ["csrf": step.hidden("csrf")!, "answer": "x"])
            XCTAssertEqual(replay.status, .unauthorized)
        }
    }

    func testStepWithoutAConversationSaysItExpired() async throws {
        try await PortalHarness.run { portal in
            let browser = portal.browser()
            let form = try await browser.get("/signin")
            browser.cookies["portal_signin"] = "1-2-3-4"
            let page = try await browser.post("/signin/continue", ["csrf": form.hidden("csrf")!, "answer": "123456"])
            XCTAssertEqual(page.status, .unauthorized)
            XCTAssertTrue(page.body.contains("This sign-in step has expired."))
        }
    }
}
