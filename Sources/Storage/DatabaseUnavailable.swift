import AsyncKit
import PostgresNIO
import SQLiteNIO

/// Which database errors mean "the database cannot do this right now" rather than "the request or
/// the code is wrong". Requests that meet one get the 503 page with `Retry-After`, not a 500: the
/// database restarting for an update, a dropped connection, a read-only standby or a full disk
/// pass, and the portal carries on by itself once they have.
extension PortalDatabase {
    package enum Unavailability: String, Sendable {
        /// No pooled connection became free in time.
        case overloaded
        /// No connection, or the connection broke (server stopped, restarting, network).
        case unreachable
        /// The server refuses to write (read-only mode, a standby), or no host of a cluster is the primary.
        case readOnly
        /// Out of disk space or memory, or an I/O error, on the database's side.
        case outOfResources
    }

    /// The kind of unavailability an error stands for, or nil for any other error.
    package static func unavailability(of error: any Error) -> Unavailability? {
        switch error {
        case is ConnectionPoolTimeoutError:
            return .overloaded
        case let pool as ConnectionPoolError:
            return pool == .shutdown ? .unreachable : nil
        case let psql as PSQLError:
            return unavailability(of: psql)
        case let sqlite as SQLiteError:
            return unavailability(of: sqlite.reason)
        case is ConnectionCheckingDatabase.ConnectionLost:
            return .unreachable
        case is PrimaryFinder.NotTheTarget:
            // No host of the cluster's URL is the primary (a failover is under way).
            return .readOnly
        default:
            return nil
        }
    }

    package static func isUnavailable(_ error: any Error) -> Bool {
        unavailability(of: error) != nil
    }

    private static func unavailability(of error: PSQLError) -> Unavailability? {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return .unreachable
        case .server:
            // SQLSTATE classes: https://www.postgresql.org/docs/current/errcodes-appendix.html
            let state = error.serverInfo?[.sqlState] ?? ""
            if state == "25006" { return .readOnly }  // read_only_sql_transaction
            // Connection failures (not 08P01, a protocol violation: a bug), admin shutdown,
            // crash shutdown, cannot connect now.
            if ["08000", "08001", "08003", "08004", "08006", "57P01", "57P02", "57P03"].contains(state) { return .unreachable }
            // Deadlock, lock or statement timeout set by the operator: retrying helps.
            if ["40P01", "55P03", "57014"].contains(state) { return .overloaded }
            if state.hasPrefix("53") || state == "58030" { return .outOfResources }  // disk full, out of memory; I/O error
            return nil
        default:
            return nil
        }
    }

    private static func unavailability(of reason: SQLiteError.Reason) -> Unavailability? {
        switch reason {
        case .busy, .locked, .busyTimeout, .busyInRecovery, .busyInSnapshot, .lockedBySharedCache:
            return .overloaded
        case .readOnly, .readonlyCantLock, .readonlyInRecovery, .readonlyInRollback, .readonlyDirectory, .readonlyBackingMoved:
            return .readOnly
        case .full, .noMemory, .ioError, .cantOpen:
            return .outOfResources
        case .ioErrorFailedWrite, .ioErrorFailedSync, .ioErrorFailedRead, .ioErrorIncompleteRead, .ioErrorFailedDirSync:
            return .outOfResources
        default:
            // Everything else, corruption and a moved database file included, is not a passing state.
            return nil
        }
    }
}
