/// The release, in the one place it is written: `--version` of both executables prints it, and
/// scripts/package-deb.sh takes the Debian packages' version from that output. CHANGELOG.md's
/// newest release must be this one.
package enum Release {
    package static let version = "1.0.0"

    /// `portal 1.0.0 (commit 45906c2)`: what `--version` prints. The commit is recorded at build
    /// time by Plugins/GitCommit.
    package static func versionLine(program: String) -> String {
        "\(program) \(version) (commit \(BuildCommit.id))"
    }
}
