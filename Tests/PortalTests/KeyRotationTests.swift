import Audit
import FluentKit
import Foundation
import SQLKit
import Storage
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import Portal
@testable import PortalWeb

/// Issue 21, item 7: the server secret rotated while the portal runs (`portal secret rotate`, as
/// `KeyRotation.rotate`), on SQLite and PostgreSQL. What was made before (a session, a form, a
/// teleTAN waiting to be shown, a stored teleTAN, its audit fingerprint) keeps working; after the
/// old key retires it is refused as unknown: a sign-in page, not an error.
final class KeyRotationTests: XCTestCase {
    func testEverythingMadeBeforeARotationWorksUntilTheOldKeyRetires() async throws {
        try await PortalHarness.run { portal in
            let secretFile = portal.portal.configuration.secretFile
            try await CreateLifecycleRecords().prepare(on: portal.db)
            let lifecycle = TeleTANLifecycle(hasher: portal.portal.foundation.hasher, now: portal.clock.function)

            // Under key 1: a teleTAN shown, one waiting to be shown, an admin's search form.
            let officer = try await portal.signedIn(.officer)
            let shownIssued = try await officer.issueTeleTAN()
            let shown = try XCTUnwrap(shownIssued)
            portal.clock.advance(seconds: 31)
            let waiting = try await officer.pressIssue()
            XCTAssertEqual(waiting.status, .seeOther)
            let admin = try await portal.signedIn(.admin)
            let searchBefore = try await admin.get("/admin/audit")
            // A hotline callback waiting in the queue, its number and name sealed under key 1.
            let agent = try await portal.signedIn(.hotline, address: "198.51.100.10")
            let callback = try await agent.queueCallback(phone: "030 1234 5678", name: "Erika Mustermann")
            let unreachable = try await agent.queueCallback(phone: "0221 7946 0958", name: "Jane Doe")

            try KeyRotation.rotate(path: secretFile, now: portal.clock.now, takeOverAfter: 0)
            portal.clock.advance(seconds: 11)  // running instances re-read the file within 10 s
            XCTAssertEqual(portal.portal.foundation.keyring.current().id, 2)

            // The session and the waiting teleTAN of before: the result page shows it.
            let result = try await officer.get("/teletan/result")
            XCTAssertEqual(result.status, .ok)
            let waited = try XCTUnwrap(result.teleTAN, "the teleTAN sealed under key 1 opens")
            // The admin's form rendered before the rotation submits (its CSRF token is key 1's),
            // and the lookup finds the teleTAN issued before under its key-1 fingerprint.
            let answer = try await admin.post("/admin/audit/lookup", ["csrf": searchBefore.hidden("csrf") ?? "", "teletan": shown])
            XCTAssertEqual(answer.status, .seeOther)
            let oldFingerprint = KeyedHasher.hash(shown, for: .teleTANFingerprint, key: try XCTUnwrap(portal.portal.foundation.keyring.keys.key(id: 1)).secret)
            XCTAssertEqual(answer.location, "/admin/audit/teletans/\(oldFingerprint)")
            let page = try await admin.get(try XCTUnwrap(answer.location))
            XCTAssertTrue(page.body.contains("id=\"teletan-issued-by\">tt-officer<"), page.body)
            // The number waiting under its key-1 fingerprint is found: a second callback is refused.
            let second = try await portal.signedIn(.hotline, address: "198.51.100.11")
            let call = try await second.startCall()
            let again = try await second.submitCall(call, action: "callback", checks: [], phone: "+49 30 12345678", name: "Erika Mustermann")
            XCTAssertEqual(again.status, .conflict)
            // The callback of before opens: the agent who takes it sees the number.
            let queue = try await agent.get("/hotline/callbacks")
            let taken = try await agent.post("/hotline/callbacks/\(callback)/take", ["csrf": queue.hidden("csrf") ?? ""])
            XCTAssertEqual(taken.location, "/hotline/callbacks/\(callback)")
            let contact = try await agent.get("/hotline/callbacks/\(callback)")
            XCTAssertTrue(contact.body.contains("+49 30 12345678"), contact.body)
            XCTAssertTrue(contact.body.contains("Erika Mustermann"))
            // The app redeems a teleTAN stored under key 1.
            let token = try await lifecycle.registrationToken(for: waited, on: portal.db)
            XCTAssertTrue(TeleTANLifecycle.isUUIDv4(token))

            // New data uses key 2: a new teleTAN waits sealed under it, and is shown.
            portal.clock.advance(seconds: 31)
            let newOfficer = try await portal.signedIn(.officer, address: "198.51.100.8")
            let pressed = try await newOfficer.pressIssue()
            XCTAssertEqual(pressed.status, .seeOther)
            struct Row: Decodable { let sealed: String }
            let sealed = try await sql(portal.db).raw("SELECT sealed FROM pending_displays").all(decoding: Row.self)
            XCTAssertEqual(sealed.map { Sealer.keyID(of: $0.sealed) }, [2])
            let newResult = try await newOfficer.get("/teletan/result")
            let newTeleTAN = try XCTUnwrap(newResult.teleTAN)

            // Retiring key 1 within the audit retention is refused; forced (a leaked key) it goes.
            let retention = KeyRotation.longestRetention(auditRetention: portal.portal.configuration.auditRetention)
            XCTAssertThrowsError(try KeyRotation.retire(id: 1, path: secretFile, now: portal.clock.now, retention: retention, force: false))
            try KeyRotation.retire(id: 1, path: secretFile, now: portal.clock.now, retention: retention, force: true)
            portal.clock.advance(seconds: 11)
            XCTAssertEqual(portal.portal.foundation.keyring.live().map(\.id), [2])

            // Old data is refused clearly: the key-1 session reads as expired (sign-in page), the
            // key-1 teleTAN is no longer linked to its entries, the key-2 one still is.
            let gone = try await officer.get("/")
            XCTAssertEqual(gone.status, .seeOther)
            XCTAssertEqual(gone.location, "/signin?expired=1")
            let newAdmin = try await portal.signedIn(.admin, address: "198.51.100.9")
            for (teleTAN, found) in [(shown, false), (newTeleTAN, true)] {
                let search = try await newAdmin.get("/admin/audit")
                let answer = try await newAdmin.post("/admin/audit/lookup", ["csrf": search.hidden("csrf") ?? "", "teletan": teleTAN])
                XCTAssertEqual(answer.status, .seeOther)
                let page = try await newAdmin.get(try XCTUnwrap(answer.location))
                XCTAssertEqual(page.status, .ok)
                XCTAssertEqual(page.body.contains("id=\"teletan-issued-by\">tt-officer<"), found, page.body)
            }
            // A callback sealed under key 1 cannot be opened any more: the queue says so (409).
            let newAgent = try await portal.signedIn(.hotline, address: "198.51.100.12")
            let queueAfter = try await newAgent.get("/hotline/callbacks")
            _ = try await newAgent.post("/hotline/callbacks/\(unreachable)/take", ["csrf": queueAfter.hidden("csrf") ?? ""])
            let unopened = try await newAgent.get("/hotline/callbacks/\(unreachable)")
            XCTAssertEqual(unopened.status, .conflict)
            XCTAssertFalse(unopened.body.contains("7946"))
            // The old admin's session and form are refused, not with a 500.
            let stale = try await admin.post("/admin/audit/lookup", ["csrf": searchBefore.hidden("csrf") ?? "", "teletan": shown])
            XCTAssertNotEqual(stale.status, .internalServerError)
        }
    }
}
