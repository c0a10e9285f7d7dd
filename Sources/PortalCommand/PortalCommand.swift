import ArgumentParser
import CommandSupport
import Foundation

/// `portal serve | migrate | keygen | audit ... | secret ...`.
@main
enum Main {
    static func main() async {
        await CommandRunner.run(PortalCommand.self)
    }
}

struct PortalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portal",
        abstract: "Health-authority portal for issuing teleTANs.",
        version: Release.versionLine(program: "portal"),
        subcommands: [Serve.self, Migrate.self, Keygen.self, AuditCommand.self, SecretCommand.self])
}
