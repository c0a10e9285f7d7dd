import ArgumentParser
import Audit
import CommandSupport
import Foundation
import TeleTAN

/// `portal secret ...`: the files holding the portal's own secrets.
struct SecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret", abstract: "Create the portal's secret files.", subcommands: [Init.self])

    /// `portal secret init`: what `serve` would create on its first start, made beforehand (e.g. by
    /// a package's postinst, as root, before the files are handed to the service account).
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the server secret and the audit checkpoint key (mode 600) if missing; existing files are left as they are. Prints the paths, never a secret.")

        @Option(help: "Server secret file, as for serve (env PORTAL_SECRET_FILE)")
        var secretFile: String = Environment.value("PORTAL_SECRET_FILE") ?? "portal.secret"
        @OptionGroup var key: AuditCheckpointKeyOption

        func run() throws {
            let secretExisted = FileManager.default.fileExists(atPath: secretFile)
            let keyExisted = FileManager.default.fileExists(atPath: key.auditCheckpointKey)
            do {
                // Both load what exists (checking its mode and form) and create only what is missing.
                _ = try SecretFile.loadOrCreate(at: secretFile)
                _ = try CheckpointSigner.loadOrCreate(keyFile: key.auditCheckpointKey)
            } catch {
                throw CommandFailure(message: StartupError.describe(error))
            }
            print("server secret:         \(secretFile) (\(secretExisted ? "existed, left as it is" : "created"))")
            print("checkpoint key:        \(key.auditCheckpointKey) (\(keyExisted ? "existed, left as it is" : "created"))")
            print("checkpoint public key: \(CheckpointSigner.publicKeyPath(forKeyFile: key.auditCheckpointKey))")
        }
    }
}
