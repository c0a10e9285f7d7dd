#if canImport(Glibc)
import Glibc
#endif

/// Group names of a user through NSS (`getgrouplist`), so that local groups and directory
/// groups via SSSD/LDAP work the same. Blocking: call it through ``PAMAuthenticator/runBlocking(_:)``.
public enum UnixGroups {
    public static func names(of username: String) -> [String] {
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
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(username, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_gid
    }

    private static func groupName(_ id: gid_t) -> String? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrgid_r(id, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.gr_name else {
            return nil
        }
        return String(cString: name)
    }
}
