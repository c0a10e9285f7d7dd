import Synchronization

/// The most sign-in requests one instance works on at once. Each costs database writes (the
/// throttle's counters, the audit entry) and PAM's time; a storm of them from many clients would
/// otherwise queue the officers' requests behind its own in the connection pool and on the CPU.
/// Requests beyond the limit are refused at once, without touching the database.
///
/// One client address may hold at most a quarter of the places (as of the PAM threads), so one
/// client (a locked address spraying on, a NAT of many) cannot take them all. The caller passes
/// the address's `AddressKey`, so an IPv6 /64 counts as one client.
package final class SignInGate: Sendable {
    package let limit: Int
    package var limitPerAddress: Int { max(1, limit / 4) }

    private struct State {
        var inside = 0
        var perAddress: [String: Int] = [:]
    }
    private let state = Mutex(State())

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` if there is room for one more sign-in from `address`, else returns nil at once.
    package func ifRoom<T>(for address: String?, _ body: () async throws -> T) async rethrows -> T? {
        let entered = state.withLock { state -> Bool in
            guard state.inside < limit else { return false }
            if let address {
                guard state.perAddress[address, default: 0] < limitPerAddress else { return false }
                state.perAddress[address, default: 0] += 1
            }
            state.inside += 1
            return true
        }
        guard entered else { return nil }
        defer {
            state.withLock { state in
                state.inside -= 1
                if let address {
                    state.perAddress[address, default: 1] -= 1
                    if state.perAddress[address] == 0 { state.perAddress[address] = nil }
                }
            }
        }
        return try await body()
    }
}
