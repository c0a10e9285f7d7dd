import ArgumentParser
import Audit
import CommandSupport
import FluentKit
import Foundation
import Storage

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Work with the audit trail.", subcommands: [Checkpoint.self, Verify.self, RotateKey.self])

    /// Opens the database, runs `body`, and closes it; database errors become one plain line.
    static func withDatabase<T>(_ storage: DatabaseOptions, _ body: (any Database) async throws -> T) async throws -> T {
        let logger = try storage.makeLogger()
        let database = try PortalDatabase(location: try storage.location(), logger: logger)
        do {
            let result = try await body(database.database(logger: logger))
            await database.shutdown()
            return result
        } catch let error as AuditIntegrityError {
            await database.shutdown()
            throw CommandFailure(message: error.description)
        } catch {
            await database.shutdown()
            throw CommandFailure(message: "cannot read the audit trail: \(StartupError.describe(error)); has `portal migrate` run with this release?")
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the latest signed checkpoint of the audit trail; with --sign, verify and sign a new one first.")

        @OptionGroup var storage: DatabaseOptions
        @OptionGroup var secret: SecretFileOption
        @OptionGroup var key: AuditCheckpointKeyOption

        @Flag(help: "Verify the trail from the last checkpoint and sign a checkpoint of it now")
        var sign = false

        func run() async throws {
            let signer = sign ? try key.loadSigner() : nil
            let integrity = AuditIntegrity(signer: signer)
            let checkpoint = try await AuditCommand.withDatabase(storage) { db in
                sign ? try await integrity.checkpointNow(now: Date(), on: db) : try await integrity.latestCheckpoint(on: db)
            }
            guard let checkpoint else {
                throw CommandFailure(message: "no checkpoint yet: `portal serve` signs one every hour, or run `portal audit checkpoint --sign`")
            }
            print(checkpoint.text, terminator: "")
        }
    }

    struct RotateKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace the checkpoint key with a new one; the old public key is kept as KEY.<key id>.pub.pem so old checkpoints still verify.",
            discussion: "Running instances sign with the key they loaded until they restart; the checkpoints they sign meanwhile verify with the kept public key.")

        @OptionGroup var key: AuditCheckpointKeyOption

        func run() throws {
            _ = try key.loadSigner()
            do {
                let (old, new) = try CheckpointSigner.rotate(keyFile: key.auditCheckpointKey)
                print("checkpoint key \(key.auditCheckpointKey): new key \(new.keyID), public key \(CheckpointSigner.publicKeyPath(forKeyFile: key.auditCheckpointKey))")
                print("old key \(old.keyID) kept for verifying: \(CheckpointSigner.keptPublicKeyPath(forKeyFile: key.auditCheckpointKey, keyID: old.keyID))")
            } catch let error as CheckpointSigner.Failure {
                throw CommandFailure(message: error.description)
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the audit trail's hash chain from the last good checkpoint (or --full), or an exported JSON Lines file against a checkpoint (--export, no database).")

        @OptionGroup var storage: DatabaseOptions
        @OptionGroup var secret: SecretFileOption
        @OptionGroup var key: AuditCheckpointKeyOption

        @Flag(help: "Check from the first entry kept (the retention floor's checkpoint), not from the last checkpoint")
        var full = false
        @Option(help: "A JSON Lines export to check instead of the database")
        var export: String?
        @Option(help: "With --export: the signed checkpoint file (`portal audit checkpoint` prints one)")
        var checkpoint: String?
        @Option(help: "With --export: a public key that may have signed the checkpoint; repeat it for several (default: the .pub.pem next to --audit-checkpoint-key and the earlier keys' KEY.<id>.pub.pem)")
        var publicKey: [String] = []
        @Flag(help: "With --export: the file is the export of a search, so seqs may skip (they must still ascend); without it a missing line is an error")
        var filtered = false

        func validate() throws {
            if export == nil, checkpoint != nil || !publicKey.isEmpty || filtered {
                throw ValidationError("--checkpoint, --public-key and --filtered go with --export FILE")
            }
            if export != nil, checkpoint == nil {
                throw ValidationError("--export needs --checkpoint FILE (the signed checkpoint to check the export against)")
            }
            if export != nil, full {
                throw ValidationError("--full checks the database; an export is always checked line by line")
            }
        }

        func run() async throws {
            if let export, let checkpoint {
                try verifyExport(export, checkpointFile: checkpoint)
                return
            }
            let integrity = AuditIntegrity(signer: nil, publicKeys: try key.publicKeys())
            let verification = try await AuditCommand.withDatabase(storage) { db in
                try await integrity.verify(full: full, now: Date(), on: db)
            }
            guard verification.isIntact else { throw CommandFailure(message: verification.summary) }
            print(verification.summary)
        }

        private func verifyExport(_ export: String, checkpointFile: String) throws {
            guard let text = try? String(contentsOfFile: checkpointFile, encoding: .utf8) else {
                throw CommandFailure(message: "cannot read the checkpoint file \(checkpointFile)")
            }
            let parsed: AuditCheckpoint
            do { parsed = try AuditCheckpoint.parse(text) } catch {
                throw CommandFailure(message: "\(checkpointFile): \(error)")
            }
            let candidates: [CheckpointPublicKey]
            do {
                candidates = publicKey.isEmpty ? try self.key.publicKeys() : try publicKey.map(CheckpointSigner.loadPublicKey(at:))
            } catch let error as CheckpointSigner.Failure {
                throw CommandFailure(message: error.description)
            }
            guard !candidates.isEmpty else {
                throw CommandFailure(message: "no public key: pass --public-key FILE (the .pub.pem of the portal's checkpoint key)")
            }
            // The key the checkpoint names, if given; else the first, whose mismatch the report explains.
            let key = candidates.first { CheckpointSigner.keyID(of: $0) == parsed.keyID } ?? candidates[0]
            let report: AuditExportVerifier.Report
            do {
                report = try AuditExportVerifier(checkpoint: parsed, publicKey: key, filtered: filtered).verify(fileAt: export)
            } catch {
                throw CommandFailure(message: "\(error)")
            }
            guard report.isIntact else {
                if let seq = report.firstBrokenSeq {
                    throw CommandFailure(message: "export broken at entry \(seq): \(report.problem ?? "unknown problem")")
                }
                throw CommandFailure(message: "export not verified: \(report.problem ?? "unknown problem")")
            }
            let coverage = report.checkpointEntryFound
                ? "entry \(parsed.seq) has the hash the checkpoint signed"
                : "entry \(parsed.seq) of the checkpoint is not in the file, so the file is checked only in itself"
            print("export intact: \(report.linesChecked) entries checked; checkpoint signature good (key \(parsed.keyID)); \(coverage)")
        }
    }
}
