import Synchronization

/// The most sign-in requests one instance works on at once. Each costs database writes (the
/// throttle's counters, the audit entry) and PAM's time; a storm of them from many clients would
/// otherwise queue the officers' requests behind its own in the connection pool and on the CPU.
/// Requests beyond the limit are refused at once, without touching the database.
final class SignInGate: Sendable {
    let limit: Int
    private let inside = Mutex(0)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` if there is room, else returns nil at once.
    func ifRoom<T>(_ body: () async throws -> T) async rethrows -> T? {
        let entered = inside.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard entered else { return nil }
        defer { inside.withLock { $0 -= 1 } }
        return try await body()
    }
}
