import AsyncKit
import NIOCore
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
        /// The server refuses to write (read-only mode, a standby).
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
        case is NIOConnectionError, is IOError, is ChannelError, is ConnectionCheckingDatabase.ConnectionLost:
            return .unreachable
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
            if state == "25006" { return .readOnly }                     // read_only_sql_transaction
            if state.hasPrefix("08") || state.hasPrefix("57P") { return .unreachable }  // connection; shutdown, cannot connect now
            if state.hasPrefix("53") || state.hasPrefix("58") { return .outOfResources }  // disk full, out of memory; system I/O
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
        default:
            // The extended I/O error codes (failed write, failed sync, ...) all name an I/O error.
            return String(describing: reason).hasPrefix("ioError") ? .outOfResources : nil
        }
    }
}
