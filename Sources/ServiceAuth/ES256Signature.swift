/// ES256 signatures in JOSE's raw form (r ‖ s, 32 bytes each, big-endian).
///
/// ECDSA is malleable: when (r, s) verifies, so does (r, n − s), a second valid token for the
/// same claims that nobody signed. Portals therefore sign with s ≤ n/2 ("low S", as BIP 62 and
/// libsecp256k1 require) and the verification server refuses the other twin; swift-crypto
/// (BoringSSL) neither makes nor checks low S by itself.
package enum ES256Signature {
    /// The order n of P-256's group (FIPS 186-4, D.1.2.3).
    static let order: [UInt8] = bytes("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
    /// ⌊n/2⌋: the largest s of a low-S signature.
    static let halfOrder: [UInt8] = bytes("7FFFFFFF800000007FFFFFFFFFFFFFFFDE737D56D38BCF4279DCE5617E3192A8")

    /// Whether `signature` is 64 bytes with s ≤ n/2. (Big-endian numbers of one length compare
    /// as their bytes do.)
    package static func isLowS(_ signature: [UInt8]) -> Bool {
        signature.count == 64 && !halfOrder.lexicographicallyPrecedes(signature[32...])
    }

    /// The same signature with s ≤ n/2 (unchanged if it already is, or not 64 bytes).
    package static func lowS(_ signature: [UInt8]) -> [UInt8] {
        signature.count != 64 || isLowS(signature) ? signature : twin(signature)
    }

    /// (r, n − s) for (r, s): the other signature that verifies whenever this one does.
    package static func twin(_ signature: [UInt8]) -> [UInt8] {
        precondition(signature.count == 64, "an ES256 signature is 64 bytes")
        var difference = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let value = Int(order[index]) - Int(signature[32 + index]) - borrow
            difference[index] = UInt8((value + 256) % 256)
            borrow = value < 0 ? 1 : 0
        }
        return Array(signature[..<32]) + difference
    }

    private static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
