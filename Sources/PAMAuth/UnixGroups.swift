#if canImport(Glibc)
import Glibc
#endif

/// Group names of a user through NSS (`getgrouplist`), so that local groups and directory
/// groups via SSSD/LDAP work the same. Blocking: call it through ``PAMAuthenticator/runBlocking(_:)``.
package enum UnixGroups {
    package static func names(of username: String) -> [String] {
        guard let primary = primaryGroup(of: username) else { return [] }
        var count: Int32 = 32
        var ids = [gid_t](repeating: 0, count: Int(count))
        while getgrouplist(username, primary, &ids, &count) == -1 {
            ids = [gid_t](repeating: 0, count: Int(count) * 2)
            count = Int32(ids.count)
        }
        return ids.prefix(Int(count)).compactMap(groupName)
    }

    private static func primaryGroup(of username: String) -> gid_t? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        let found = withGrowingBuffer(initialSize: 16384) { buffer, size in
            getpwnam_r(username, &entry, buffer, size, &result)
        }
        return found && result != nil ? entry.pw_gid : nil
    }

    private static func groupName(_ id: gid_t) -> String? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var name: String?
        // A directory group with thousands of members needs more than 64 KiB for its member list.
        _ = withGrowingBuffer(initialSize: 65536) { buffer, size in
            let status = getgrgid_r(id, &entry, buffer, size, &result)
            if status == 0, result != nil, let cName = entry.gr_name { name = String(cString: cName) }
            return status
        }
        return name
    }

    /// Calls a `get*_r` function with a buffer that doubles while the function answers ERANGE
    /// (up to 64 MiB). The entry points into the buffer, so `body` must read what it needs.
    /// Returns whether the call succeeded.
    private static func withGrowingBuffer(initialSize: Int, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> Bool {
        var size = initialSize
        while size <= 64 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            let status = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
            if status != ERANGE { return status == 0 }
            size *= 2
        }
        return false
    }
}
