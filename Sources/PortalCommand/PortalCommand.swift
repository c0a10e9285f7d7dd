import ArgumentParser
import Foundation

/// `portal serve | migrate | audit verify`. Parsing errors and bad configuration values end
/// with one line naming the flag, never a stack trace.
@main
enum Main {
    static func main() async {
        do {
            var command = try PortalCommand.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("portal: \(error.message)\n".utf8))
            exit(78)  // EX_CONFIG
        } catch let error as CommandFailure {
            FileHandle.standardError.write(Data("portal: \(error.message)\n".utf8))
            exit(1)
        } catch {
            if PortalCommand.exitCode(for: error) == .success {
                PortalCommand.exit(withError: error)  // --help, --version
            }
            FileHandle.standardError.write(Data("portal: \(PortalCommand.message(for: error))\n".utf8))
            exit(64)  // EX_USAGE
        }
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
