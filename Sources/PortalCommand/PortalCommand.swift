import ArgumentParser
import Foundation

/// `portal serve | migrate | audit verify`. Parsing errors and bad configuration values end
/// with one line naming the flag, never a stack trace.
@main
enum Main {
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try PortalCommand.parseAsRoot()
        } catch {
            if PortalCommand.exitCode(for: error) == .success {
                PortalCommand.exit(withError: error)  // --help, --version
            }
            fail(PortalCommand.message(for: error), status: 64)  // EX_USAGE
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
            // Only the error's type: descriptions of driver errors may quote connection strings.
            fail("failed: \(String(reflecting: type(of: error)))", status: 1)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("portal: \(message)\n".utf8))
        exit(status)
    }
}

struct PortalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portal",
        abstract: "Health-authority portal for issuing teleTANs.",
        subcommands: [Serve.self, Migrate.self, AuditCommand.self])
}

/// A start-up configuration problem; `message` names the flag and its environment variable.
struct ConfigurationError: Error {
    let message: String
}

/// A command that ran but did not succeed (e.g. a broken audit chain).
struct CommandFailure: Error {
    let message: String
}
