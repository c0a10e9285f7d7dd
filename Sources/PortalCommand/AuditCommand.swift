import ArgumentParser
import Audit
import CommandSupport
import FluentKit
import Foundation
import PortalWeb
import Storage
import TeleTAN

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Work with the audit trail.", subcommands: [Checkpoint.self, Verify.self, RotateKey.self])

    /// Opens the database, runs `body`, and closes it; database errors become one plain line.
    static func withDatabase<T>(_ storage: RequiredDatabaseOptions, _ body: (any Database) async throws -> T) async throws -> T {
        let location = try storage.location()
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            // SQLite would create an empty database here, and the command would report on it.
            throw ConfigurationError(message: "--database (PORTAL_DATABASE): \(path) does not exist; pass the database `portal serve` uses")
        }
        let logger = try storage.makeLogger()
        let database = try PortalDatabase(location: location, logger: logger)
        do {
            let result = try await body(database.database(logger: logger))
            await database.shutdown()
            return result
        } catch let error as AuditIntegrityError {
            await database.shutdown()
            throw CommandFailure(message: error.description)
        } catch let error as CommandFailure {
            await database.shutdown()
            throw error
        } catch {
            await database.shutdown()
            throw CommandFailure(message: "cannot read the audit trail: \(StartupError.describe(error)); has `portal migrate` run with this release?")
        }
    }

    /// Compares a handed-out checkpoint with the database (``RestoreDetection``); a restore newly
    /// detected also ends every session. Throws unless the checkpoint's entry is there.
    static func compare(_ checkpoint: AuditCheckpoint, from file: String, on db: any Database) async throws {
        let now = Date()
        let outcome = try await RestoreDetection().check(checkpoint, now: now, on: db)
        switch outcome {
        case .present, .belowRetention:
            return
        case .restoredOlder(let gap):
            var message = "\(file): \(gap.description)"
            if gap.newlyRecorded {
                let ended = try await EndAllSessions.run(reason: .restoreDetected, now: now, on: db)
                message += "; \(ended) sessions ended"
            }
            throw CommandFailure(message: message)
        case .rewritten:
            throw CommandFailure(message: "\(file): \(outcome.description)")
        }
    }

    /// Reads a checkpoint file and checks its signature with `publicKey`.
    static func readCheckpoint(_ file: String, publicKey: CheckpointPublicKey) throws -> AuditCheckpoint {
        let checkpoint = try parseCheckpoint(file)
        guard checkpoint.isSigned(by: publicKey) else {
            throw CommandFailure(message: "\(file): the signature does not verify with the public key (key \(CheckpointSigner.keyID(of: publicKey)), the checkpoint names key \(checkpoint.keyID))")
        }
        return checkpoint
    }

    static func parseCheckpoint(_ file: String) throws -> AuditCheckpoint {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw CommandFailure(message: "cannot read the checkpoint file \(file)")
        }
        do { return try AuditCheckpoint.parse(text) } catch {
            throw CommandFailure(message: "\(file): \(error)")
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the latest signed checkpoint of the audit trail; with --sign, verify and sign a new one first.")

        @OptionGroup var storage: RequiredDatabaseOptions
        @OptionGroup var secret: SecretFileOption
        @OptionGroup var key: AuditCheckpointKeyOption

        @Flag(help: "Verify the trail from the last checkpoint and sign a checkpoint of it now; refused (exit 1) when it is broken, a checkpoint row is missing or does not verify, or the last full check found it broken")
        var sign = false
        @Option(help: "Write the checkpoint to FILE (replaced at once, mode 640) instead of printing it; a checkpoint already in FILE is first compared with the database (signed by the current key or one kept by rotate-key), and a FILE naming a higher entry than the new checkpoint is never replaced")
        var out: String?

        /// Readable by the portal's group (a job that ships it to the key holder); a checkpoint is
        /// public, but says how busy the portal was.
        static let fileMode: mode_t = 0o640

        func run() async throws {
            _ = try storage.location()  // first: the timer's job without its environment file fails on this
            let signer = sign ? try key.loadSigner() : nil
            let integrity = AuditIntegrity(signer: signer)
            let previous = try out.flatMap { try previousCheckpoint(in: $0, signer: signer) }
            let checkpoint = try await AuditCommand.withDatabase(storage) { db in
                if let previous, previous.trusted, let out { try await AuditCommand.compare(previous.checkpoint, from: out, on: db) }
                return sign ? try await integrity.checkpointNow(now: Date(), on: db) : try await integrity.latestCheckpoint(on: db)
            }
            guard let checkpoint else {
                throw CommandFailure(message: "no checkpoint yet: `portal serve` signs one every hour, or run `portal audit checkpoint --sign`")
            }
            guard let out else {
                print(checkpoint.text, terminator: "")
                return
            }
            // Whatever signed it: a file ahead of the database is the evidence of a restore from an
            // older backup, and a lower seq written over it would hide the restore for good.
            if let previous, previous.checkpoint.seq > checkpoint.seq {
                throw CommandFailure(message: "\(out): not replaced: it names entry \(previous.checkpoint.seq), above the database's newest checkpoint (\(checkpoint.seq)); was the database restored from an older backup? Move the file aside (docs/deployment.md section 9.6) once that is settled")
            }
            do {
                try AtomicFile.write(Data(checkpoint.text.utf8), to: out, mode: Self.fileMode)
            } catch let error as AtomicFile.Failure {
                throw CommandFailure(message: "--out: \(error.description)")
            }
        }

        /// The checkpoint the last run wrote to `file` (nil: no file yet), and whether a key of this
        /// installation signed it: the current key or one kept by `rotate-key`, as `verify` trusts
        /// them. Only a trusted one is compared with the database; another key's (a key file
        /// replaced by hand) is reported and still never replaced by a lower seq.
        private func previousCheckpoint(in file: String, signer: CheckpointSigner?) throws -> (checkpoint: AuditCheckpoint, trusted: Bool)? {
            var isDirectory: ObjCBool = false
            // A directory there is left to the write, which fails naming it.
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
            let checkpoint = try AuditCommand.parseCheckpoint(file)
            let keys = try key.publicKeys() + (signer.map { [$0.publicKey] } ?? [])
            guard keys.contains(where: { checkpoint.isSigned(by: $0) }) else {
                FileHandle.standardError.write(Data("portal: \(file): signed by a key that is neither --audit-checkpoint-key nor kept beside it (\(checkpoint.keyID)); not compared with the database\n".utf8))
                return (checkpoint, false)
            }
            return (checkpoint, true)
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
            abstract: "Check the audit trail's hash chain from the last good checkpoint (or --full), or an exported JSON Lines file against a checkpoint (--export, no database).",
            discussion: """
                Without --full only the entries from the newest checkpoint on are walked, and the output says from which \
                checkpoint: an entry below it changed, deleted or reordered by someone with write access to the database is \
                seen only by --full (and by the full check `portal serve` runs every --audit-full-check-interval). Run --full \
                when the database may have been written around the portal, after a restore, and before handing a trail on. \
                While the last full check found the trail broken, a check without --full reports that too.
                """)

        @OptionGroup var storage: RequiredDatabaseOptions
        @OptionGroup var secret: SecretFileOption
        @OptionGroup var key: AuditCheckpointKeyOption

        @Flag(help: "Check from the first entry kept (the retention floor's checkpoint), not from the last checkpoint: the only check that sees entries below the newest checkpoint")
        var full = false
        @Option(help: "A JSON Lines export to check instead of the database")
        var export: String?
        @Option(help: "A signed checkpoint handed out earlier (`portal audit checkpoint --out` writes one): checks that its entry is in the database with the hash it signed (reports a restore from an older backup), or with --export checks the export against it")
        var checkpoint: String?
        @Option(help: "With --checkpoint: a public key that may have signed it; repeat it for several (default: the .pub.pem next to --audit-checkpoint-key and the earlier keys' KEY.<id>.pub.pem)")
        var publicKey: [String] = []
        @Flag(help: "With --export: the file is the export of a search, so seqs may skip (they must still ascend); without it a missing line is an error")
        var filtered = false

        func validate() throws {
            if export == nil, filtered {
                throw ValidationError("--filtered goes with --export FILE")
            }
            if checkpoint == nil, !publicKey.isEmpty {
                throw ValidationError("--public-key goes with --checkpoint FILE")
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
            let handedOut = try checkpoint.map { file in
                try AuditCommand.readCheckpoint(file, publicKey: try checkpointKey(for: AuditCommand.parseCheckpoint(file)))
            }
            let integrity = AuditIntegrity(signer: nil, publicKeys: try key.publicKeys())
            let verification = try await AuditCommand.withDatabase(storage) { db in
                if let handedOut, let checkpoint { try await AuditCommand.compare(handedOut, from: checkpoint, on: db) }
                return try await integrity.verify(full: full, now: Date(), on: db)
            }
            guard verification.isIntact else { throw CommandFailure(message: "\(verification.summary); \(verification.range)") }
            if let handedOut {
                print("checkpoint \(handedOut.seq): its entry is in the database with the hash it signed (key \(handedOut.keyID))")
            }
            print("\(verification.summary); \(verification.range)")
        }

        /// The key that signed `checkpoint`: among --public-key, or else the .pub.pem next to
        /// --audit-checkpoint-key and the earlier keys kept beside it, the one the checkpoint names
        /// (else the first, whose mismatch the report explains).
        private func checkpointKey(for checkpoint: AuditCheckpoint) throws -> CheckpointPublicKey {
            let candidates: [CheckpointPublicKey]
            do {
                candidates = publicKey.isEmpty ? try key.publicKeys() : try publicKey.map(CheckpointSigner.loadPublicKey(at:))
            } catch let error as CheckpointSigner.Failure {
                throw CommandFailure(message: error.description)
            }
            guard !candidates.isEmpty else {
                throw CommandFailure(message: "no public key: pass --public-key FILE (the .pub.pem of the portal's checkpoint key)")
            }
            return candidates.first { CheckpointSigner.keyID(of: $0) == checkpoint.keyID } ?? candidates[0]
        }

        private func verifyExport(_ export: String, checkpointFile: String) throws {
            let parsed = try AuditCommand.parseCheckpoint(checkpointFile)
            let key = try checkpointKey(for: parsed)
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
