import ArgumentParser
import Audit
import FluentKit
import Foundation
import Storage
import TeleTAN

/// A start-up configuration problem; `message` names the flag and its environment variable.
package struct ConfigurationError: Error {
    package let message: String
    package init(message: String) { self.message = message }
}

/// A command that ran but did not succeed (e.g. a broken audit chain).
package struct CommandFailure: Error {
    package let message: String
    package init(message: String) { self.message = message }
}

/// Parses and runs a command line with the exit codes of docs/configuration.md: 64 for usage
/// errors, 78 for bad configuration (one line naming the flag), 1 for a failed command.
package enum CommandRunner {
    package static func run<Root: ParsableCommand>(_ root: Root.Type) async {
        // Before anything secret is read: every command handles secrets (serve, keys, exports).
        PrivateMemory.forbidCoreDumpsAndTracing()
        var command: any ParsableCommand
        do {
            command = try Root.parseAsRoot()
        } catch {
            if Root.exitCode(for: error) == .success {
                Root.exit(withError: error)  // --help, --version
            }
            fail(Root.message(for: error), status: 64)  // EX_USAGE
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ConfigurationError {
            fail(error.message, status: 78)  // EX_CONFIG
        } catch let error as CommandFailure {
            fail(error.message, status: 1)
        } catch {
            if Root.exitCode(for: error) == .success {
                Root.exit(withError: error)  // `help` and `--help` on a subcommand print and exit 0
            }
            // Only the error's type: descriptions of driver errors may quote connection strings.
            fail("failed: \(String(reflecting: type(of: error)))", status: 1)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(ProcessInfo.processInfo.processName): \(message)\n".utf8))
        exit(status)
    }
}

/// Start-up errors for the operator: our own errors say what is wrong; driver errors are named
/// by type only, because their descriptions can quote a connection string with its password.
package enum StartupError {
    package static func describe(_ error: any Error) -> String {
        switch error {
        case let error as SecretFile.Failure: error.description
        // `portal serve` loads or creates the key; its text says what is wrong with the file.
        case let error as CheckpointSigner.Failure: "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY): \(error.description)"
        case let error as DatabaseLocation.ParseError: "--database: \(error.description)"
        case let error as CustomStringConvertible where String(reflecting: type(of: error)).hasPrefix("ServiceAuth."): error.description
        case let error where DatabaseErrorText.describe(error) != nil: DatabaseErrorText.describe(error)!
        default: "\(String(reflecting: type(of: error))) (is the database reachable and the schema writable?)"
        }
    }
}

/// `migrate` of both executables: create or update the tables, then exit.
package enum MigrateCommand {
    package static func run(location: DatabaseLocation, migrations: [any Migration], logger: Logger) async throws {
        let database: PortalDatabase
        do {
            database = try await PortalDatabase.openMigrated(location: location, migrations: migrations, logger: logger)
        } catch {
            throw CommandFailure(message: "migration failed: \(StartupError.describe(error))")
        }
        await database.shutdown()
        print("migrations applied to \(location)")
    }

    /// `migrate --status`: one line per migration of this release, applied (with its time) or
    /// pending, then a count. Changes nothing; a SQLite file that does not exist is not created.
    package static func status(location: DatabaseLocation, migrations: [any Migration], logger: Logger) async throws {
        let states: [MigrationState]
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            states = migrations.map { MigrationState(name: $0.name, appliedAt: nil) }
            print("database file \(path) does not exist yet: `migrate` (or the first start) creates it")
        } else {
            let database: PortalDatabase
            do {
                database = try PortalDatabase(location: location, logger: logger)
            } catch {
                throw CommandFailure(message: "cannot read the migration status: \(StartupError.describe(error))")
            }
            do {
                states = try await database.migrationStatus(migrations, logger: logger)
                await database.shutdown()
            } catch {
                await database.shutdown()
                throw CommandFailure(message: "cannot read the migration status: \(StartupError.describe(error))")
            }
        }
        let time = ISO8601DateFormatter()
        for state in states {
            if let appliedAt = state.appliedAt {
                print("applied  \(time.string(from: appliedAt))  \(state.name)")
            } else {
                print("pending  \(state.name)")
            }
        }
        let pending = states.filter(\.isPending).count
        print("\(states.count - pending) applied, \(pending) pending\(pending > 0 ? ": `migrate` applies them" : "")")
    }
}
