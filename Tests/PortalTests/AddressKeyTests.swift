import AccessControl
import HTTPTypes
import XCTest
@testable import SignIn

/// The key of a client address for the guessing protection (``AddressKey``), and the least time
/// a failed sign-in takes (``FailureTime``).
final class AddressKeyTests: XCTestCase {
    func testIPv6CountsByItsSlash64AndIPv4ByItself() {
        let cases = [
            ("2001:db8:5:6::1", "2001:db8:5:6::/64"), ("2001:DB8:5:6:ffff:ffff:ffff:ffff", "2001:db8:5:6::/64"),
            ("2001:0db8:0005:0006:0000:0000:0000:0001", "2001:db8:5:6::/64"), ("2001:db8::1", "2001:db8::/64"),
            ("::1", "::/64"), ("fe80::1:2:3:4", "fe80::/64"),
            ("192.0.2.7", "192.0.2.7"), ("::ffff:192.0.2.7", "192.0.2.7"), ("::FFFF:c000:0207", "192.0.2.7"),
            ("fe80::1%eth0", "fe80::1%eth0"), ("unknown", "unknown"), ("", ""),
        ]
        for (address, key) in cases {
            XCTAssertEqual(AddressKey.of(address), key, address)
        }
    }

    func testAFailedSignInWaitsOutItsTimeFromArrivalWithJitter() async {
        let time = FailureTime(minimum: .milliseconds(200))
        var waits: [Duration] = []
        for _ in 0..<5 {
            let arrived = ContinuousClock.now
            await time.wait(since: arrived)
            waits.append(ContinuousClock.now - arrived)
        }
        XCTAssertTrue(waits.allSatisfy { $0 >= .milliseconds(200) && $0 < .milliseconds(400) }, "\(waits)")
        // Time already spent (PAM's) counts: the answer is not later than the floor and jitter.
        let late = ContinuousClock.now - .milliseconds(150)
        let started = ContinuousClock.now
        await time.wait(since: late)
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(200))
        XCTAssertTrue(FailureTime.isFailure(.unauthorized) && FailureTime.isFailure(.forbidden))
        XCTAssertFalse(FailureTime.isFailure(.tooManyRequests) || FailureTime.isFailure(.seeOther) || FailureTime.isFailure(.ok))
    }
}
