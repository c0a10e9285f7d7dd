import ArgumentParser
import Audit
import CommandSupport
import Foundation
import Logging
import Storage

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

/// `--audit-checkpoint-interval`, `--audit-full-check-interval` and `--audit-retention`, for `serve`'s scheduled jobs.
struct AuditScheduleOptions: ParsableArguments {
    @Option(help: "How often the audit trail is verified and a checkpoint signed, e.g. 1h (env PORTAL_AUDIT_CHECKPOINT_INTERVAL)")
    var auditCheckpointInterval: String = Environment.value("PORTAL_AUDIT_CHECKPOINT_INTERVAL") ?? "1h"
    @Option(help: "How often the whole audit trail is checked in the background, e.g. 1d; while the last full check found it broken, no checkpoint is signed (env PORTAL_AUDIT_FULL_CHECK_INTERVAL)")
    var auditFullCheckInterval: String = Environment.value("PORTAL_AUDIT_FULL_CHECK_INTERVAL") ?? "1d"
    @Option(help: "How long audit entries are kept before the periodic job deletes them, e.g. 400d; at least 1d, at most 3660d (env PORTAL_AUDIT_RETENTION)")
    var auditRetention: String = Environment.value("PORTAL_AUDIT_RETENTION") ?? "400d"

    func checkpointInterval() throws -> Duration {
        try OptionParser.duration(auditCheckpointInterval, flag: "--audit-checkpoint-interval", env: "PORTAL_AUDIT_CHECKPOINT_INTERVAL")
    }

    func fullCheckInterval() throws -> Duration {
        try OptionParser.duration(auditFullCheckInterval, flag: "--audit-full-check-interval", env: "PORTAL_AUDIT_FULL_CHECK_INTERVAL")
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

/// The database of the commands that run beside `serve` (`audit`, `sessions`): the same flag and
/// variable as serve's, but no default. Serve's `sqlite:portal.sqlite` suits a first try in a
/// working directory; here it would make an empty database wherever the command runs (the
/// checkpoint timer without its env file did) and report on that.
struct RequiredDatabaseOptions: ParsableArguments {
    @Option(help: "sqlite:PATH or postgres://user:password@host:port/database, the one `portal serve` uses; required (env PORTAL_DATABASE)")
    var database: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error (env PORTAL_LOG_LEVEL)")
    var logLevel: String = Environment.value("PORTAL_LOG_LEVEL") ?? "info"

    func location() throws -> DatabaseLocation {
        guard let text = database ?? Environment.value("PORTAL_DATABASE") else {
            throw ConfigurationError(message: "--database (PORTAL_DATABASE): not set; pass the database `portal serve` uses, e.g. with the service's environment file (EnvironmentFile=/etc/teletan-portal/portal.env)")
        }
        return try OptionParser.database(text, env: "PORTAL_DATABASE")
    }

    func makeLogger() throws -> Logger {
        try OptionParser.logger(label: "teletan-portal", level: logLevel, env: "PORTAL_LOG_LEVEL")
    }
}
