import ArgumentParser
import Audit
import CommandSupport
import Foundation
import TeleTAN

/// `portal secret ...`: the files holding the portal's own secrets.
struct SecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret", abstract: "Create, list, rotate and retire the server secrets.",
        subcommands: [Init.self, List.self, Rotate.self, Retire.self])

    /// `--secret-file`, as for serve.
    struct SecretFileLocation: ParsableArguments {
        @Option(help: "Server secret file, as for serve (env PORTAL_SECRET_FILE)")
        var secretFile: String = Environment.value("PORTAL_SECRET_FILE") ?? "portal.secret"

        func keys() throws -> ServerKeys {
            do { return try ServerKeyring.read(secretFile) } catch {
                throw CommandFailure(message: "--secret-file (PORTAL_SECRET_FILE): \(StartupError.describe(error))")
            }
        }
    }

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

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the server keys: id, since when current, which is current. Never prints a secret.")

        @OptionGroup var location: SecretFileLocation

        func run() throws {
            let keys = try location.keys()
            let current = keys.current(at: Date())
            for key in keys.keys {
                // Key 1 of a single-secret file, or as a keyring writes it (1970): current since the start.
                let from = key.currentFrom <= Date(timeIntervalSince1970: 0) ? "the start" : key.currentFrom.formatted(.iso8601)
                print("key \(key.id): current from \(from)\(key.id == current.id ? " (current)" : key.currentFrom > Date() ? " (not yet current)" : "")")
            }
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new server secret that hashes and seals new data from --take-over-after on; older keys still find and open what they made.",
            discussion: "Running instances re-read the file within 10 seconds. With several instances, --take-over-after must be longer than it takes every instance to see the new file (the default 1m is, when they share it).")

        @OptionGroup var location: SecretFileLocation
        @Option(help: "When the new key becomes current, e.g. 0s, 1m, 10m (all instances must have read the file by then)")
        var takeOverAfter = "1m"

        func run() throws {
            guard let delay = try? OptionParser.duration(takeOverAfter, flag: "--take-over-after", env: "", allowZero: true) else {
                throw ConfigurationError(message: "--take-over-after: expected a duration such as 0s, 1m or 10m, got '\(takeOverAfter)'")
            }
            _ = try location.keys()
            do {
                let key = try KeyRotation.rotate(path: location.secretFile, now: Date(), takeOverAfter: Double(delay.components.seconds))
                print("added key \(key.id) to \(location.secretFile), current from \(key.currentFrom.formatted(.iso8601))")
            } catch let error as KeyRotation.Refusal {
                throw CommandFailure(message: error.description)
            }
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an old server key once nothing made with it can still be kept: the key after it must have been current for the audit retention (at least 21 days).",
            discussion: "What the key made (sessions, waiting teleTANs, callbacks, audit fingerprints) is no longer found or opened afterwards.")

        @OptionGroup var location: SecretFileLocation
        @OptionGroup var auditSchedule: AuditScheduleOptions
        @Argument(help: "The key id (`portal secret list`)")
        var id: Int
        @Flag(help: "Retire even though data made with the key may still exist (a key that leaked)")
        var force = false

        func run() throws {
            let retention = KeyRotation.longestRetention(auditRetention: try auditSchedule.retention())
            _ = try location.keys()
            do {
                try KeyRotation.retire(id: id, path: location.secretFile, now: Date(), retention: retention, force: force)
                print("retired key \(id) from \(location.secretFile)")
            } catch let error as KeyRotation.Refusal {
                throw CommandFailure(message: error.description)
            }
        }
    }
}
