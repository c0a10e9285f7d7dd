import ArgumentParser
import Audit
import CommandSupport
import Foundation

/// `--audit-checkpoint-key`: shared by `serve` (whose PortalApp creates the key when missing;
/// `StartupError` names this flag when it cannot) and the `audit` commands (which only read it).
struct AuditCheckpointKeyOption: ParsableArguments {
    @Option(help: "P-256 private key (PEM) that signs audit checkpoints, created with mode 600 and a .pub.pem next to it if missing (env PORTAL_AUDIT_CHECKPOINT_KEY)")
    var auditCheckpointKey: String = Environment.value("PORTAL_AUDIT_CHECKPOINT_KEY") ?? "audit-checkpoint-key.pem"

    /// For the CLI: an existing key only. A key made up here would sign checkpoints nobody outside knows.
    func loadSigner() throws -> CheckpointSigner {
        guard FileManager.default.fileExists(atPath: auditCheckpointKey) else {
            throw ConfigurationError(message: "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY): \(auditCheckpointKey) does not exist; pass the key `portal serve` uses (serve creates it on its first start)")
        }
        do {
            return try CheckpointSigner.load(keyFile: auditCheckpointKey)
        } catch let error as CheckpointSigner.Failure {
            throw ConfigurationError(message: "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY): \(error.description)")
        }
    }

    /// The public keys that check checkpoints: the current one (the .pub.pem, or else the private
    /// key's) and those of earlier keys kept beside it by `portal audit rotate-key`.
    func publicKeys() throws -> [CheckpointPublicKey] {
        do {
            return try CheckpointSigner.publicKeys(forKeyFile: auditCheckpointKey)
        } catch let error as CheckpointSigner.Failure {
            throw ConfigurationError(message: "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY): \(error.description)")
        }
    }
}

/// `--audit-checkpoint-interval` and `--audit-retention`, for `serve`'s scheduled job.
struct AuditScheduleOptions: ParsableArguments {
    @Option(help: "How often the audit trail is verified and a checkpoint signed, e.g. 1h (env PORTAL_AUDIT_CHECKPOINT_INTERVAL)")
    var auditCheckpointInterval: String = Environment.value("PORTAL_AUDIT_CHECKPOINT_INTERVAL") ?? "1h"
    @Option(help: "How long audit entries are kept before the periodic job deletes them, e.g. 400d; at least 1d, at most 3660d (env PORTAL_AUDIT_RETENTION)")
    var auditRetention: String = Environment.value("PORTAL_AUDIT_RETENTION") ?? "400d"

    func checkpointInterval() throws -> Duration {
        try OptionParser.duration(auditCheckpointInterval, flag: "--audit-checkpoint-interval", env: "PORTAL_AUDIT_CHECKPOINT_INTERVAL")
    }

    /// From one day (a typo must not wipe the trail) to ten years.
    func retention() throws -> Duration {
        let message = "--audit-retention (PORTAL_AUDIT_RETENTION): expected a duration from 1d to 3660d such as 400d, got '\(auditRetention)'"
        guard let value = try? OptionParser.duration(auditRetention, flag: "--audit-retention", env: "PORTAL_AUDIT_RETENTION", maximumDays: 3660),
              value >= .seconds(86400)
        else { throw ConfigurationError(message: message) }
        return value
    }
}

/// `--secret-file`, accepted by the audit commands so they take serve's command line. They do not
/// need the secret: the chain and checkpoints use no keyed hash.
struct SecretFileOption: ParsableArguments {
    @Option(help: "Server secret file, as for serve; not read by the audit commands (env PORTAL_SECRET_FILE)")
    var secretFile: String = Environment.value("PORTAL_SECRET_FILE") ?? "portal.secret"
}
