import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What can be told about a PAM service file without running PAM: that it exists, that every
/// module it names is installed, and that the modules that read files can read (and, for
/// pam_oath, lock) them as the user the portal runs as.
package struct PAMServiceCheck {
    package let service: String
    package let directory: String
    package let moduleDirectories: [String]
    package let isRoot: Bool

    package init(service: String, directory: String = "/etc/pam.d",
                 moduleDirectories: [String] = ["/lib/x86_64-linux-gnu/security", "/usr/lib/x86_64-linux-gnu/security",
                                                "/lib/aarch64-linux-gnu/security", "/usr/lib/aarch64-linux-gnu/security",
                                                "/lib/security", "/usr/lib/security"],
                 isRoot: Bool = geteuid() == 0) {
        self.service = service
        self.directory = directory
        self.moduleDirectories = moduleDirectories
        self.isRoot = isRoot
    }

    private var flag: String { "--pam-service (PORTAL_PAM_SERVICE)" }

    package func problems() -> [String] {
        let path = "\(directory)/\(service)"
        guard FileManager.default.fileExists(atPath: path) else {
            return ["\(flag): \(path) does not exist (docs/pam/README.md has service files)"]
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return ["\(flag): \(path) cannot be read by this user"]
        }
        var problems: [String] = []
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if first == "@include", words.count > 1 {
                let included = "\(directory)/\(words[1])"
                if !FileManager.default.fileExists(atPath: included) {
                    problems.append("\(flag): \(path) includes \(included), which does not exist")
                }
                continue
            }
            guard let module = moduleWord(words) else { continue }
            let arguments = Array(words.drop(while: { $0 != module }).dropFirst())
            guard find(module) != nil else {
                problems.append("\(flag): \(path) names \(module), which is not installed")
                continue
            }
            for problem in moduleProblems(module: (module as NSString).lastPathComponent, arguments: arguments) where !problems.contains(problem) {
                problems.append(problem)
            }
        }
        return problems
    }

    /// The module of a rule: the word after the type and the control (which may be `[...]`).
    private func moduleWord(_ words: [String]) -> String? {
        guard words.count >= 3, ["auth", "account", "password", "session", "-auth", "-account", "-password", "-session"].contains(words[0])
        else { return nil }
        var index = 1
        if words[index].hasPrefix("[") {
            while index < words.count, !words[index].hasSuffix("]") { index += 1 }
        }
        index += 1
        return index < words.count ? words[index] : nil
    }

    private func find(_ module: String) -> String? {
        if module.hasPrefix("/") { return FileManager.default.fileExists(atPath: module) ? module : nil }
        return moduleDirectories.map { "\($0)/\(module)" }.first { FileManager.default.fileExists(atPath: $0) }
    }

    private func moduleProblems(module: String, arguments: [String]) -> [String] {
        switch module {
        case "pam_unix.so" where !isRoot && !FileManager.default.isReadableFile(atPath: "/etc/shadow"):
            return ["\(flag): pam_unix cannot check other accounts' passwords as this user: it needs read access to /etc/shadow (add the portal's user to group shadow, docs/deployment.md section 2)"]
        case "pam_oath.so":
            guard let usersFile = arguments.first(where: { $0.hasPrefix("usersfile=") })?.dropFirst("usersfile=".count) else {
                return []
            }
            let file = String(usersFile)
            let folder = (file as NSString).deletingLastPathComponent
            if !FileManager.default.fileExists(atPath: file) {
                return ["\(flag): pam_oath's usersfile \(file) does not exist"]
            }
            if !FileManager.default.isReadableFile(atPath: file) || !FileManager.default.isWritableFile(atPath: file)
                || !FileManager.default.isWritableFile(atPath: folder) {
                return ["\(flag): pam_oath must read, lock and rewrite \(file) as this user (it creates \(file).lock in \(folder)): give the portal's user that file and its directory, e.g. under /var/lib/teletan-portal (docs/pam/README.md)"]
            }
            return []
        default:
            return []
        }
    }
}
