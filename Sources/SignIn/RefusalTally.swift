import Foundation
import Synchronization

/// Sign-ins this instance turned away without a verdict: PAM was busy (every PAM thread in use,
/// or this address's share of them), or too many sign-ins were under way at once. The first one
/// in each period gets its own audit entry; the rest
/// are counted here and written as one entry by the periodic work, so a storm while the
/// directory hangs cannot fill the audit trail. Per instance on purpose: each instance has its
/// own PAM threads. A crash loses at most one period's count (the log still has each one).
final class RefusalTally: Sendable {
    private struct State {
        var recordedOne = false
        var uncounted = 0
    }
    private let state = Mutex(State())

    /// True when this refusal is to be recorded on its own (the first of the period).
    func refuse() -> Bool {
        state.withLock { state in
            if !state.recordedOne {
                state.recordedOne = true
                return true
            }
            state.uncounted += 1
            return false
        }
    }

    /// The refusals counted since the last call, and a new period.
    func takeCount() -> Int {
        state.withLock { state in
            defer { state = State() }
            return state.uncounted
        }
    }

    /// Puts a count back that could not be written (the database was away).
    func giveBack(_ count: Int) {
        state.withLock { $0.uncounted += count }
    }
}
