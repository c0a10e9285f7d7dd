import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small checks of the host that `check-config` makes.
package enum SystemChecks {
    /// True when NSS (files, LDAP, SSSD, ...) knows the group.
    package static func groupExists(_ name: String) -> Bool {
        var group = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        return status == 0 && result != nil
    }

    /// nil when the file exists and this user can reach it; else why not ("does not exist", ...).
    package static func fileAccessProblem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) != 0 else { return nil }
        return errno == ENOENT ? "does not exist" : "cannot be reached by this user (\(String(cString: strerror(errno))))"
    }

    /// nil when this user can read the file at `path`, else what stops it ("does not exist", ...).
    package static func readProblem(_ path: String) -> String? {
        if let problem = fileAccessProblem(path) { return problem }
        return access(path, R_OK) == 0 ? nil : "cannot be read by this user (\(String(cString: strerror(errno))))"
    }

    /// A problem with a file that must hold a secret: missing, unreadable, or open to others.
    package static func secretFileProblem(_ path: String, flag: String, createdBy: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return errno == ENOENT
                ? "\(flag): \(path) does not exist (\(createdBy))"
                : "\(flag): \(path): \(String(cString: strerror(errno)))"
        }
        if status.st_mode & 0o077 != 0 {
            return "\(flag): \(path) has mode \(String(status.st_mode & 0o777, radix: 8)); it must not be readable by group or others (chmod 600)"
        }
        if !FileManager.default.isReadableFile(atPath: path) {
            return "\(flag): \(path) cannot be read by this user (it must belong to the portal's user)"
        }
        return nil
    }
}
