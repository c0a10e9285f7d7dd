#if canImport(Glibc)
import Glibc
#endif

/// The key under which the sign-in guessing protection counts and locks a client address: an
/// IPv4 address as it is; an IPv6 address by its /64 (`2001:db8:5:6::/64`), since one host or
/// one customer line is usually given a whole /64 and could otherwise take a fresh address, with
/// a fresh count, for every guess (2^64 of them); an IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.7`) as the IPv4 address it is. Anything that is not an IP address (a proxy's
/// odd `X-Forwarded-For` entry) stays as it is.
///
/// The price: everyone behind one /64 shares a count, as an office behind one NAT address shares
/// one for IPv4 (hence the high `--signin-failures-per-address`).
package enum AddressKey {
    package static func of(_ address: String) -> String {
        var address6 = in6_addr()
        guard inet_pton(AF_INET6, address, &address6) == 1 else { return address }
        var bytes = withUnsafeBytes(of: address6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        for index in 8..<16 { bytes[index] = 0 }
        var prefix = in6_addr()
        withUnsafeMutableBytes(of: &prefix) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &prefix, &text, socklen_t(text.count)) != nil else { return address }
        return String(cString: text) + "/64"
    }
}
