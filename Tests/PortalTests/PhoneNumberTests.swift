import Foundation
import PortalWeb
import XCTest
@testable import Hotline
@testable import Portal

/// Callback numbers (issue #18, item 2): the portal reads numbers as Google's libphonenumber does,
/// checked against Tests/fixtures/phone-numbers.tsv (generated from its PyPI port phonenumbers by
/// scripts/phone-metadata/fixture.py; Tests/support/test_phone_numbers.py keeps it derivable),
/// and calls back only what --callback-numbers allows.
final class PhoneNumberTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Row: Equatable {
        var input, e164, region, type, international, accepted, masked: String
    }

    static func fixture() throws -> [Row] {
        let text = try String(contentsOf: root.appendingPathComponent("Tests/fixtures/phone-numbers.tsv"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("input\t") }.map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Row(input: fields[0], e164: fields[1], region: fields[2], type: fields[3], international: fields[4],
                       accepted: fields[5], masked: fields[6])
        }
    }

    /// What the portal makes of an input, in the fixture's columns.
    static func row(_ input: String) -> Row {
        guard let number = PhoneNumber(input) else {
            return Row(input: input, e164: "invalid", region: "-", type: "-", international: "-", accepted: "no", masked: "-")
        }
        return Row(input: input, e164: number.e164, region: number.region, type: number.type.rawValue, international: number.readable,
                   accepted: CallbackNumberPolicy.standard.allows(number) ? "yes" : "no", masked: number.masked)
    }

    func testEveryNumberOfTheFixtureIsReadAsLibphonenumberReadsIt() throws {
        let rows = try Self.fixture()
        // A few hundred of each kind: the fixture really is the one the generator writes.
        XCTAssertGreaterThan(rows.count, 3000)
        for type in PhoneNumberType.allCases {
            XCTAssertGreaterThan(rows.filter { $0.type == type.rawValue }.count, 50, type.rawValue)
        }
        XCTAssertGreaterThan(rows.filter { $0.e164 == "invalid" }.count, 300)
        var wrong: [String] = []
        for expected in rows {
            let actual = Self.row(expected.input)
            if actual != expected { wrong.append("\(expected.input): expected \(expected), got \(actual)") }
        }
        XCTAssertEqual(wrong.count, 0, wrong.prefix(20).joined(separator: "\n"))
    }

    func testTheIssuesExamples() throws {
        let berlin = try XCTUnwrap(PhoneNumber("030 1234567"))
        XCTAssertEqual(berlin.readable, "+49 30 1234567")
        XCTAssertEqual(berlin.type, .fixedLine)
        XCTAssertEqual(berlin.region, "DE")
        XCTAssertEqual(PhoneNumber("+49 (0)30 1234567")?.e164, "+49301234567")
        XCTAssertEqual(PhoneNumber("0151 12345678")?.type, .mobile)
        XCTAssertEqual(PhoneNumber("0900 1 234567")?.type, .premiumRate)
        XCTAssertEqual(PhoneNumber("0180 5 123456")?.type, .sharedCost)
        XCTAssertEqual(PhoneNumber("0700 12345678")?.type, .personal)
        XCTAssertEqual(PhoneNumber("0800 1234567")?.type, .tollFree)
        XCTAssertNil(PhoneNumber("0190 1234567"), "0190 numbers were withdrawn")
        XCTAssertNil(PhoneNumber("11833"))
        XCTAssertNil(PhoneNumber("+999 1234567"), "no such country code")
        XCTAssertEqual(PhoneNumber("+1 202 555 0123")?.readable, "+1 202-555-0123")
        XCTAssertEqual(PhoneNumber("+7 701 123 4567")?.region, "KZ")
        XCTAssertEqual(PhoneNumber("+353 1 234 5678")?.masked, "+353 ••• ••• •• 78")
        XCTAssertEqual(PhoneNumber("+1 202 555 0123")?.masked, "+1 ••• ••• •• 23")
        for refused in ["0900 1 234567", "01377 123456", "0137 1234567", "0180 1234567", "0700 12345678", "0800 1234567",
                        "+1 202 555 0123", "+7 495 123 45 67", "+44 20 7946 0018", "+43 1 234567"] {
            XCTAssertEqual(PhoneNumber(refused).map(CallbackNumberPolicy.standard.allows), false, refused)
        }
    }

    /// libphonenumber takes letters, extensions and a German number without its 0; the call page
    /// keeps its stricter rule (the fixture holds only forms both agree on).
    func testFormsThePortalRefusesThoughLibphonenumberTakesThem() {
        for input in ["49 30 1234567", "301234567", "0800 FLOWERS", "030 1234567 ext 5", "++49 30 1234567", "030 123\u{0664}567",
                      String(repeating: "0", count: 41)] {
            XCTAssertNil(PhoneNumber(input), input)
        }
    }

    /// The mask never tells more than the country code and the last two digits: not the length,
    /// not the area code, for a country code of any length.
    func testTheMaskShowsOnlyTheCountryCodeAndTheLastTwoDigits() throws {
        for row in try Self.fixture() where row.e164 != "invalid" {
            let number = try XCTUnwrap(PhoneNumber(row.input))
            XCTAssertEqual(number.masked.filter(\.isNumber), "\(number.countryCode)\(number.nationalNumber.suffix(2))", row.input)
            XCTAssertEqual(number.masked, "+\(number.countryCode) ••• ••• •• \(number.nationalNumber.suffix(2))")
        }
    }

    func testPolicyEntries() throws {
        XCTAssertEqual(try CallbackNumberPolicy(parsing: "DE"), .standard)
        XCTAssertTrue(try CallbackNumberPolicy(parsing: "DE").isStandard)
        let wider = try CallbackNumberPolicy(parsing: "DE, AT:fixed-line+mobile+toll-free,+4980012,us")
        XCTAssertFalse(wider.isStandard)
        func allows(_ policy: CallbackNumberPolicy, _ input: String) throws -> Bool { policy.allows(try XCTUnwrap(PhoneNumber(input), input)) }
        XCTAssertTrue(try allows(wider, "+43 1 234567"))
        XCTAssertTrue(try allows(wider, "+43 800 123456"), "toll free in Austria")
        XCTAssertFalse(try allows(wider, "+43 900 123456"), "premium rate in Austria")
        XCTAssertTrue(try allows(wider, "0800 1234567"), "+4980012...")
        XCTAssertFalse(try allows(wider, "0800 3234567"), "another 0800 number")
        XCTAssertTrue(try allows(wider, "+1 202 555 0123"), "fixed line or mobile counts as either")
        XCTAssertFalse(try allows(wider, "+1 800 555 0123"), "toll free in the US")
        XCTAssertFalse(try allows(wider, "+1 416 555 0123"), "Canada shares +1 but is another region")
        XCTAssertTrue(try allows(CallbackNumberPolicy(parsing: "DE:any"), "0900 1 234567"))
        XCTAssertTrue(try allows(CallbackNumberPolicy(parsing: "US:fixed-line"), "+1 202 555 0123"))
        for (bad, says) in [("", "at least one entry"), ("DE,,AT", "empty entry"), ("XX", "unknown region 'XX'"), ("001", "unknown region"),
                            ("AT:", "unknown number type ''"), ("AT:fixed-line+paid", "unknown number type 'paid'"),
                            ("AT:fixed-line-or-mobile", "unknown number type"), ("+999", "country code"), ("+4", "country code"),
                            ("+49 30", "1 to 15 digits"), ("+", "1 to 15 digits")] {
            XCTAssertThrowsError(try CallbackNumberPolicy(parsing: bad), bad) { error in
                XCTAssertTrue("\(error)".contains(says), "\(bad): \(error)")
            }
        }
    }

    // MARK: - The call page

    func testACallbackToANumberOutsideThePolicyIsRefusedWithItsOwnMessageKeepingWhatWasTyped() async throws {
        try await PortalHarness.run { portal in
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            for number in ["0900 1 234567", "0137 1234567", "0180 5 123456", "0700 12345678", "+44 20 7946 0958", "+1 202 555 0123"] {
                let refused = try await agent.submitCall(call, action: "callback", checks: [], phone: number, name: "Erika Mustermann")
                XCTAssertEqual(refused.status, .badRequest, number)
                XCTAssertTrue(refused.body.contains("This number cannot be called back: only German landline and mobile numbers are allowed"), number)
                XCTAssertTrue(refused.body.contains("value=\"\(number)\""), number)
                XCTAssertTrue(refused.body.contains("value=\"Erika Mustermann\""), number)
            }
            // Not a number at all: the message that asks for one.
            let invalid = try await agent.submitCall(call, action: "callback", checks: [], phone: "0190 1234567", name: "Erika Mustermann")
            XCTAssertTrue(invalid.body.contains("Please enter a phone number"))
            let queued = try await agent.submitCall(call, action: "callback", checks: [], phone: "030 1234567", name: "Erika Mustermann")
            XCTAssertEqual(queued.location, "/hotline?done=callback_queued")
            let queue = try await agent.get("/hotline/callbacks")
            XCTAssertEqual(queue.body.matches(of: /id="callback-[0-9a-f-]{36}"/).count, 1)
        }
    }

    func testAnOperatorMayAllowMoreCountriesAndRanges() async throws {
        try await PortalHarness.run(configure: { $0.callbackNumbers = try! CallbackNumberPolicy(parsing: "DE,GB,+4980012") }) { portal in
            let agent = try await portal.signedIn(.hotline)
            let id = try await agent.queueCallback(phone: "+44 20 7946 0958", name: "Jane Doe")
            let queue = try await agent.get("/hotline/callbacks")
            XCTAssertTrue(queue.body.contains("+44 ••• ••• •• 58"), queue.body)
            _ = try await agent.post("/hotline/callbacks/\(id)/take", ["csrf": queue.hidden("csrf") ?? ""])
            let entry = try await agent.get("/hotline/callbacks/\(id)")
            XCTAssertTrue(entry.body.contains("+44 20 7946 0958"), entry.body)
            _ = try await agent.queueCallback(phone: "0800 1234567", name: "Free Call")
            let call = try await agent.startCall()
            let refused = try await agent.submitCall(call, action: "callback", checks: [], phone: "0900 1 234567", name: "Erika Mustermann")
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertTrue(refused.body.contains("calls back only the countries and kinds of numbers its operator has allowed"))
        }
    }

    func testTheMessagesInGerman() {
        XCTAssertEqual(HotlineStrings.table.german["hotline_error_phone_not_allowed"]?.contains("nur deutsche Festnetz- und Mobilfunknummern"), true)
        XCTAssertNotNil(HotlineStrings.table.german["hotline_error_phone_not_allowed_configured"])
    }
}
