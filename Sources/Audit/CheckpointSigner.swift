import Crypto
import Foundation
import TeleTAN
#if canImport(Glibc)
import Glibc
#endif

/// A checkpoint's public key, named so callers need not import Crypto.
package typealias CheckpointPublicKey = P256.Signing.PublicKey

/// The portal's checkpoint key: a P-256 private key in a PEM file only the service account can
/// read (PKCS#8), and its public key next to it (`KEY.pub.pem`, SubjectPublicKeyInfo) for the
/// outside parties who keep checkpoints. The key is named by the first 16 hex digits of SHA-256
/// over the public key's DER.
package struct CheckpointSigner: Sendable {
    private let privateKey: P256.Signing.PrivateKey
    package var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
    package let keyID: String

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Loads the key at `keyFile`, creating it (mode 0600) with its public key file if missing.
    package static func loadOrCreate(keyFile: String) throws -> CheckpointSigner {
        if !FileManager.default.fileExists(atPath: keyFile) {
            try create(at: keyFile)
        }
        let signer = try load(keyFile: keyFile)
        try signer.writePublicKeyIfMissing(next: keyFile)
        return signer
    }

    /// Loads an existing key; never creates one.
    package static func load(keyFile: String) throws -> CheckpointSigner {
        var status = stat()
        guard stat(keyFile, &status) == 0 else {
            throw Failure(description: "cannot read checkpoint key \(keyFile): \(String(cString: strerror(errno)))")
        }
        if status.st_mode & 0o077 != 0 {
            throw Failure(description: "checkpoint key \(keyFile) has mode \(String(status.st_mode & 0o777, radix: 8)); it must not be readable by group or others (chmod 600)")
        }
        guard let data = FileManager.default.contents(atPath: keyFile) else {
            throw Failure(description: "cannot read checkpoint key \(keyFile): permission denied")
        }
        do {
            return CheckpointSigner(privateKey: try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self)))
        } catch {
            throw Failure(description: "checkpoint key \(keyFile) is not a P-256 private key in PEM format")
        }
    }

    package init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        keyID = Self.keyID(of: privateKey.publicKey)
    }

    /// Signs "entry `seq` has hash `hash`" at `time`.
    package func sign(seq: Int64, hash: String, at time: Date) throws -> AuditCheckpoint {
        // The body shows the time in whole milliseconds, as the checkpoint keeps it.
        let body = AuditCheckpoint.body(seq: seq, hash: hash, signedAt: time, keyID: keyID)
        let signature = try privateKey.signature(for: Data(body.utf8))
        return AuditCheckpoint(seq: seq, hash: hash, signedAt: time, keyID: keyID, signature: signature.derRepresentation)
    }

    package static func keyID(of publicKey: P256.Signing.PublicKey) -> String {
        KeyedHasher.hex(SHA256.hash(data: publicKey.derRepresentation).prefix(8))
    }

    /// `KEY.pub.pem` for `KEY.pem`, else `KEY.pub.pem` appended to the whole name.
    package static func publicKeyPath(forKeyFile keyFile: String) -> String {
        keyFile.hasSuffix(".pem") ? String(keyFile.dropLast(4)) + ".pub.pem" : keyFile + ".pub.pem"
    }

    package static func loadPublicKey(at path: String) throws -> P256.Signing.PublicKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read public key \(path)")
        }
        do { return try P256.Signing.PublicKey(pemRepresentation: String(decoding: data, as: UTF8.self)) } catch {
            throw Failure(description: "\(path) is not a P-256 public key in PEM format")
        }
    }

    /// The public key of the checkpoint key `keyFile`: from its .pub.pem, or else from the private key.
    /// nil when neither file exists.
    package static func publicKey(forKeyFile keyFile: String) throws -> P256.Signing.PublicKey? {
        let publicPath = publicKeyPath(forKeyFile: keyFile)
        if FileManager.default.fileExists(atPath: publicPath) { return try loadPublicKey(at: publicPath) }
        if FileManager.default.fileExists(atPath: keyFile) { return try load(keyFile: keyFile).publicKey }
        return nil
    }

    /// Every public key that checks this installation's checkpoints: the current key's and those of
    /// earlier keys `rotate` kept beside it (`KEY.<key id>.pub.pem`). Empty when none exists.
    package static func publicKeys(forKeyFile keyFile: String) throws -> [P256.Signing.PublicKey] {
        var keys = try publicKey(forKeyFile: keyFile).map { [$0] } ?? []
        let url = URL(fileURLWithPath: keyFile)
        let stem = url.lastPathComponent.hasSuffix(".pem") ? String(url.lastPathComponent.dropLast(4)) : url.lastPathComponent
        let directory = url.deletingLastPathComponent().path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where name.hasPrefix(stem + ".") && name.hasSuffix(".pub.pem") && name != stem + ".pub.pem" {
            let key = try loadPublicKey(at: directory + "/" + name)
            if !keys.contains(where: { $0.derRepresentation == key.derRepresentation }) { keys.append(key) }
        }
        return keys
    }

    /// Replaces the checkpoint key with a new one: the old public key is kept as
    /// `KEY.<old key id>.pub.pem` (old checkpoints stay verifiable), the new private key replaces
    /// `keyFile` atomically and its public key `KEY.pub.pem`. The old private key is gone.
    package static func rotate(keyFile: String) throws -> (old: CheckpointSigner, new: CheckpointSigner) {
        let old = try load(keyFile: keyFile)
        let keptPath = keptPublicKeyPath(forKeyFile: keyFile, keyID: old.keyID)
        try writeAtomically(old.publicKey.pemRepresentation + "\n", to: keptPath, mode: 0o644)
        let new = CheckpointSigner(privateKey: P256.Signing.PrivateKey())
        try writeAtomically(new.privateKey.pemRepresentation + "\n", to: keyFile, mode: 0o600)
        try writeAtomically(new.publicKey.pemRepresentation + "\n", to: publicKeyPath(forKeyFile: keyFile), mode: 0o644)
        return (old, new)
    }

    /// `KEY.<key id>.pub.pem` for `KEY.pem`: where `rotate` keeps a former key's public key.
    package static func keptPublicKeyPath(forKeyFile keyFile: String, keyID: String) -> String {
        (keyFile.hasSuffix(".pem") ? String(keyFile.dropLast(4)) : keyFile) + ".\(keyID).pub.pem"
    }

    private static func writeAtomically(_ text: String, to path: String, mode: mode_t) throws {
        do {
            try AtomicFile.write(Data(text.utf8), to: path, mode: mode)
        } catch let error as AtomicFile.Failure {
            throw Failure(description: error.description)
        }
    }

    /// Writes the key to a temporary file and links it into place: another instance starting at
    /// the same moment either wins the link or reads a complete key, never a half-written one.
    private static func create(at path: String) throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation + "\n"
        let temporary = path + ".tmp-\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot create checkpoint key \(path): \(String(cString: strerror(errno)))")
        }
        defer { unlink(temporary) }
        let written = pem.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == pem.utf8.count, synced == 0 else {
            throw Failure(description: "cannot write checkpoint key \(path)")
        }
        if link(temporary, path) != 0, errno != EEXIST {
            throw Failure(description: "cannot create checkpoint key \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The public key file is derived data: written when missing, refused when it names another key.
    private func writePublicKeyIfMissing(next keyFile: String) throws {
        let path = Self.publicKeyPath(forKeyFile: keyFile)
        if FileManager.default.fileExists(atPath: path) {
            guard try Self.loadPublicKey(at: path).derRepresentation == publicKey.derRepresentation else {
                throw Failure(description: "public key \(path) does not belong to checkpoint key \(keyFile); move it away and start again to rewrite it")
            }
            return
        }
        do {
            try Data((publicKey.pemRepresentation + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw Failure(description: "cannot write public key \(path)")
        }
    }
}
