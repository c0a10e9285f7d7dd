import Foundation
import Synchronization

/// Runs the full chain check away from the request that asked for it: on ten million entries it
/// takes minutes, longer than a proxy waits, and a second click must not start a second walk.
/// One at a time per instance; the result goes to the database, where every instance's page
/// reads it.
package final class BackgroundCheck: Sendable {
    private struct State {
        var busy = false
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    package init() {}

    /// Starts `work` unless a check is still running here; false if one is.
    func start(_ work: @escaping @Sendable () async -> Void) -> Bool {
        let free = state.withLock { state in
            guard !state.busy else { return false }
            state.busy = true
            return true
        }
        guard free else { return false }
        let task = Task {
            await work()
            self.state.withLock { $0.busy = false }
        }
        state.withLock { $0.task = task }
        return true
    }

    /// Waits for the check under way, if any (tests).
    package func wait() async {
        await state.withLock { $0.task }?.value
    }
}
