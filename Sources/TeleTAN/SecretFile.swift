import Crypto
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The server secret: 32 random bytes, hex-encoded in a file only the service account can read.
/// It keys every HMAC (stored hashes, fingerprints, CSRF tokens) and the encryption of a teleTAN
/// waiting to be shown. Created on first start with mode 0600 if missing; `portal secret rotate`
/// turns it into a keyring of several (`ServerKeys`), in which this first secret is key id 1.
package enum SecretFile {
    package enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case malformed(path: String)
        case malformedKeyring(path: String, reason: String)
        case tooOpen(path: String, mode: String)

        package var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read or create secret file \(path): \(reason)"
            case .malformed(let path): "secret file \(path) must hold 64 hex characters (32 bytes)"
            case .malformedKeyring(let path, let reason): "secret file \(path): \(reason)"
            case .tooOpen(let path, let mode): "secret file \(path) has mode \(mode); it must not be readable by group or others (chmod 600)"
            }
        }
    }

    /// The current key of the secret file (or keyring, `ServerKeyring`) at `path`, creating the
    /// file with a new random key if it does not exist.
    package static func loadOrCreate(at path: String) throws -> SymmetricKey {
        try createIfMissing(at: path)
        return try ServerKeyring.read(path).current(at: Date()).secret
    }

    /// Creates the file with a new random key (mode 0600) unless it exists.
    package static func createIfMissing(at path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            try create(at: path)
        }
    }

    static func create(at path: String) throws {
        let key = SymmetricKey(size: .bits256)
        let hex = key.withUnsafeBytes { KeyedHasher.hex($0) } + "\n"
        // O_EXCL: never overwrite a secret another instance created a moment ago.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return }
            throw Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let written = hex.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        if written != hex.utf8.count {
            throw Failure.unreadable(path: path, reason: "short write")
        }
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
