import Crypto
import Foundation

/// A signed statement "entry `seq` of the audit trail has hash `hash`", in a text form like a
/// C2SP signed note, so an outside party can keep it and check it with `openssl`:
///
///     teletan-portal audit checkpoint
///     seq <N>
///     hash <64 hex>
///     time <UTC ISO 8601 with milliseconds>
///     key <key id>
///
///     signature <base64 DER ECDSA P-256/SHA-256 over the five body lines>
package struct AuditCheckpoint: Sendable, Equatable {
    package static let origin = "teletan-portal audit checkpoint"

    package let seq: Int64
    package let hash: String
    /// Whole milliseconds, as the body shows it.
    package let signedAt: Date
    package let keyID: String
    /// DER-encoded ECDSA signature over ``body``.
    package let signature: Data

    package init(seq: Int64, hash: String, signedAt: Date, keyID: String, signature: Data) {
        self.seq = seq
        self.hash = hash
        self.signedAt = AuditChain.truncatedToMilliseconds(signedAt)
        self.keyID = keyID
        self.signature = signature
    }

    /// The signed bytes: exactly five lines, each ending in "\n".
    package var body: String {
        Self.body(seq: seq, hash: hash, signedAt: signedAt, keyID: keyID)
    }

    static func body(seq: Int64, hash: String, signedAt: Date, keyID: String) -> String {
        "\(origin)\nseq \(seq)\nhash \(hash)\ntime \(AuditTime.iso8601(milliseconds: AuditChain.milliseconds(signedAt)))\nkey \(keyID)\n"
    }

    /// The whole note: body, an empty line, the signature line.
    package var text: String {
        body + "\nsignature \(signature.base64EncodedString())\n"
    }

    /// True when `publicKey` is the key named in the checkpoint and its signature is good.
    package func isSigned(by publicKey: P256.Signing.PublicKey) -> Bool {
        guard CheckpointSigner.keyID(of: publicKey) == keyID,
              let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(ecdsa, for: Data(body.utf8))
    }

    package struct ParseError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Reads the text form back. Strict: the body must be exactly what ``body`` would give, so
    /// what was parsed is what was signed.
    package static func parse(_ text: String) throws -> AuditCheckpoint {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 7, lines[0] == origin, lines[5].isEmpty else {
            throw ParseError(description: "not an audit checkpoint (expected the line '\(origin)', four more lines, an empty line and a signature line)")
        }
        func value(_ line: String, _ name: String) throws -> String {
            guard line.hasPrefix(name + " ") else { throw ParseError(description: "expected a '\(name) ...' line, got '\(line.prefix(80))'") }
            return String(line.dropFirst(name.count + 1))
        }
        guard let seq = Int64(try value(lines[1], "seq")), seq >= 0 else { throw ParseError(description: "the seq line is not a number") }
        let hash = try value(lines[2], "hash")
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw ParseError(description: "the hash line does not hold 64 lowercase hex digits")
        }
        guard let ms = AuditTime.milliseconds(iso8601: try value(lines[3], "time")) else {
            throw ParseError(description: "the time line is not UTC ISO 8601 with milliseconds (2026-11-24T10:00:00.000Z)")
        }
        let keyID = try value(lines[4], "key")
        guard let signature = Data(base64Encoded: try value(lines[6], "signature")) else {
            throw ParseError(description: "the signature is not base64")
        }
        guard lines.dropFirst(7).allSatisfy(\.isEmpty) else { throw ParseError(description: "unexpected text after the signature line") }
        let checkpoint = AuditCheckpoint(seq: seq, hash: hash, signedAt: Date(timeIntervalSince1970: Double(ms) / 1000),
                                         keyID: keyID, signature: signature)
        guard checkpoint.body == lines[0..<5].joined(separator: "\n") + "\n" else {
            throw ParseError(description: "the body is not in the canonical form")
        }
        return checkpoint
    }
}
