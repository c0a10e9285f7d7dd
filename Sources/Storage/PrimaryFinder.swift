import FluentKit
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import SQLKit

/// Finds the server that may be written to among a cluster's hosts, as libpq does for
/// `target_session_attrs=read-write` (PostgresNIO does not read the setting): the hosts are tried
/// in order, and every new connection is asked whether its server is a standby before it is used.
/// A standby (a replica, or a former primary that came back as one) never gets a statement.
///
/// There is one connection pool per host. The host that last gave a usable connection is tried
/// first, so during normal operation a request costs no extra round trip; only a connection not
/// seen before is checked, once.
final class PrimaryFinder: Sendable {
    /// The connection's server is not what the URL's `target_session_attrs` asks for.
    struct NotTheTarget: Error {}

    let target: PostgresURL.TargetSessionAttributes
    private let hostCount: Int
    private let state = NIOLockedValueBox(State())

    private struct State {
        var current = 0
        /// Connections (PostgresNIO's ids, unique in the process) already checked.
        var checked: Set<PostgresConnection.ID> = []
    }

    /// Above this many remembered connections the set starts again (closed connections are never
    /// told about): a re-check costs one query per connection.
    private static let rememberedConnections = 1000

    init(hostCount: Int, target: PostgresURL.TargetSessionAttributes) {
        self.hostCount = hostCount
        self.target = target
    }

    /// The hosts' indexes in the order to try them: the last good one, then the others as the URL
    /// lists them.
    var order: [Int] {
        let current = state.withLockedValue { $0.current }
        return [current] + (0..<hostCount).filter { $0 != current }
    }

    func succeeded(host: Int) {
        state.withLockedValue { $0.current = host }
    }

    /// Succeeds when `connection` may be used: checked before, or its server is what the URL asks for.
    func check(_ connection: PostgresConnection) -> EventLoopFuture<Void> {
        let id = connection.id
        if target == .any || state.withLockedValue({ $0.checked.contains(id) }) {
            return connection.eventLoop.makeSucceededVoidFuture()
        }
        let query = "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only"
        return connection.sql().raw(SQLQueryString(query)).first().flatMapThrowing { row in
            guard let row else { throw NotTheTarget() }
            let standby = try row.decode(column: "standby", as: Bool.self)
            let readOnly = try row.decode(column: "read_only", as: Bool.self)
            guard !standby, self.target != .readWrite || !readOnly else { throw NotTheTarget() }
            self.state.withLockedValue { state in
                if state.checked.count >= Self.rememberedConnections { state.checked.removeAll() }
                state.checked.insert(id)
            }
        }.flatMapError { error in
            // Never handed out again: the pool opens a new connection, which is checked anew.
            connection.close().flatMapThrowing { throw error }
        }
    }

    /// A connection whose server refused to write (it became read-only or a standby): closed, so
    /// the next request finds the primary again.
    func refusedToWrite(_ connection: PostgresConnection) {
        let id = connection.id
        state.withLockedValue { _ = $0.checked.remove(id) }
        connection.close().whenComplete { _ in }
    }
}
