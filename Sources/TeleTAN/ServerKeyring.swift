import Crypto
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One server secret of the keyring: 32 random bytes under a key id, used for new data from
/// `currentFrom` on (earlier only to look up and open what other instances already made with it).
package struct ServerKey: Sendable {
    package let id: Int
    package let secret: SymmetricKey
    package let currentFrom: Date

    package init(id: Int, secret: SymmetricKey, currentFrom: Date) {
        self.id = id
        self.secret = secret
        self.currentFrom = currentFrom
    }
}

/// The keys of a keyring file, oldest first, and its two text forms:
/// - today's single secret (64 hex digits, what `SecretFile` writes): key id 1, current since ever;
/// - the keyring `portal secret rotate` writes: comment lines and one `ID HEX CURRENT-FROM` line per
///   key (`2 3f0c... 2026-11-25T21:00:00Z`).
package struct ServerKeys: Sendable {
    package let keys: [ServerKey]

    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    package init(keys: [ServerKey]) {
        self.keys = keys.sorted { $0.id < $1.id }
    }

    /// The key that signs, hashes and seals at `time`: the newest whose time has come (the oldest
    /// if none has, so a keyring whose only keys lie in the future still works).
    package func current(at time: Date) -> ServerKey {
        keys.last { $0.currentFrom <= time } ?? keys[0]
    }

    /// Every key, the current one first: lookups try each.
    package func live(at time: Date) -> [ServerKey] {
        let current = current(at: time)
        return [current] + keys.filter { $0.id != current.id }.reversed()
    }

    package func key(id: Int) -> ServerKey? {
        keys.first { $0.id == id }
    }

    package static func parse(_ text: String) throws -> ServerKeys {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let bytes = SecretFile.decodeHex(trimmed), bytes.count == 32 {
            return ServerKeys(keys: [ServerKey(id: 1, secret: SymmetricKey(data: bytes), currentFrom: .distantPast)])
        }
        var keys: [ServerKey] = []
        for line in trimmed.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let id = Int(fields[0]), id > 0,
                  let bytes = SecretFile.decodeHex(String(fields[1])), bytes.count == 32,
                  let from = try? Date(String(fields[2]), strategy: .iso8601)
            else { throw Malformed(description: "expected 64 hex characters, or lines 'KEY-ID HEX CURRENT-FROM' as `portal secret rotate` writes them") }
            guard !keys.contains(where: { $0.id == id }) else { throw Malformed(description: "key id \(id) appears twice") }
            keys.append(ServerKey(id: id, secret: SymmetricKey(data: bytes), currentFrom: from))
        }
        guard !keys.isEmpty else { throw Malformed(description: "no key in it") }
        return ServerKeys(keys: keys)
    }

    /// The keyring form (always, even for key 1 alone, once rotate or retire has written it).
    package func text() -> String {
        var text = """
            # teleTAN server secrets, written by `portal secret rotate` / `retire`. Keep mode 600.
            # KEY-ID SECRET CURRENT-FROM: the newest key whose time has come hashes and seals new
            # data; every key listed still finds and opens what was made with it.

            """
        for key in keys {
            let hex = key.secret.withUnsafeBytes { KeyedHasher.hex($0) }
            let from = key.currentFrom == .distantPast ? Date(timeIntervalSince1970: 0) : key.currentFrom
            text += "\(key.id) \(hex) \(from.formatted(.iso8601))\n"
        }
        return text
    }
}

/// The server secrets a running instance uses, re-read from their file when it changes: checked
/// at most every `recheckInterval` (10 s), and at once (at most once a second) when sealed data
/// names a key id not loaded yet. So a rotation or retirement reaches running instances without
/// a restart; a file that cannot be read or parsed meanwhile leaves the loaded keys in use.
package final class ServerKeyring: Sendable {
    private struct State {
        var keys: ServerKeys
        var fileIdentity: FileIdentity?
        var checkedAt: Date
    }

    private struct FileIdentity: Equatable {
        let inode: UInt64, size: Int64, modified: Int, modifiedNanoseconds: Int
    }

    private let path: String?
    private let now: @Sendable () -> Date
    private let recheckInterval: TimeInterval
    private let state: Mutex<State>

    /// Fixed keys, never re-read (tests, tools).
    package init(keys: ServerKeys, now: @escaping @Sendable () -> Date = Date.init) {
        path = nil
        self.now = now
        recheckInterval = .infinity
        state = Mutex(State(keys: keys, fileIdentity: nil, checkedAt: now()))
    }

    /// A single secret as key id 1.
    package convenience init(secret: SymmetricKey) {
        self.init(keys: ServerKeys(keys: [ServerKey(id: 1, secret: secret, currentFrom: .distantPast)]))
    }

    /// Loads the file at `path`, creating a new single secret (mode 600) if it is missing.
    package init(path: String, recheckInterval: TimeInterval = 10, now: @escaping @Sendable () -> Date = Date.init) throws {
        try SecretFile.createIfMissing(at: path)
        let keys = try Self.read(path)
        self.path = path
        self.now = now
        self.recheckInterval = recheckInterval
        state = Mutex(State(keys: keys, fileIdentity: Self.identity(of: path), checkedAt: now()))
    }

    /// Reads and parses a keyring file, refusing one that group or others may read.
    package static func read(_ path: String) throws -> ServerKeys {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw SecretFile.Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if status.st_mode & 0o077 != 0 {
            throw SecretFile.Failure.tooOpen(path: path, mode: String(status.st_mode & 0o777, radix: 8))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SecretFile.Failure.unreadable(path: path, reason: "permission denied")
        }
        do {
            return try ServerKeys.parse(String(decoding: data, as: UTF8.self))
        } catch let error as ServerKeys.Malformed {
            throw SecretFile.Failure.malformedKeyring(path: path, reason: error.description)
        }
    }

    package var keys: ServerKeys { refreshed(force: false) }

    package func current() -> ServerKey {
        keys.current(at: now())
    }

    /// Every key, the current first.
    package func live() -> [ServerKey] {
        keys.live(at: now())
    }

    /// The key with this id; an unknown id makes the file be checked again first.
    package func key(id: Int) -> ServerKey? {
        if let key = keys.key(id: id) { return key }
        return refreshed(force: true).key(id: id)
    }

    private func refreshed(force: Bool) -> ServerKeys {
        guard let path else { return state.withLock { $0.keys } }
        let time = now()
        return state.withLock { state in
            let due = time.timeIntervalSince(state.checkedAt)
            guard due >= recheckInterval || (force && due >= 1) else { return state.keys }
            state.checkedAt = time
            let identity = Self.identity(of: path)
            guard identity != state.fileIdentity, let keys = try? Self.read(path) else { return state.keys }
            state.keys = keys
            state.fileIdentity = identity
            return keys
        }
    }

    private static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(inode: UInt64(status.st_ino), size: Int64(status.st_size),
                            modified: status.st_mtim.tv_sec, modifiedNanoseconds: status.st_mtim.tv_nsec)
    }
}
