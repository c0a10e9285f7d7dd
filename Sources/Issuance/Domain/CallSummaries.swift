import FluentKit
import Foundation

/// What "My recent teleTANs" shows of the hotline call a teleTAN was issued in: when it started
/// and how it ended. The hotline feature owns the calls and depends on this one, not the other
/// way round, so the app composition (`PortalApp`) hands in a function that looks them up.
package struct CallSummary: Sendable, Equatable {
    package let startedAt: Date
    /// The text key of its outcome (`hotline_outcome_…`; the open call's too).
    package let outcomeKey: String

    package init(startedAt: Date, outcomeKey: String) {
        self.startedAt = startedAt
        self.outcomeKey = outcomeKey
    }
}

/// Looks up calls by id; a call not found (deleted after its retention) is left out.
package typealias CallSummaries = @Sendable (_ ids: [UUID], _ db: any Database) async throws -> [UUID: CallSummary]
