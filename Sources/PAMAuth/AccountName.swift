#if canImport(Glibc)
import Glibc
#endif

/// The one name a person has on this machine, whichever spelling they typed.
package enum AccountName {
    /// The account's own spelling through NSS (`getpwnam`'s `pw_name`), or nil if NSS does not
    /// know the name. SSSD with `case_sensitive = false` finds `ALICE` and `alice@domain` and
    /// answers `alice`; PAM leaves the name as typed. Blocking (the directory may be asked).
    package static func canonical(_ name: String) -> String? {
        var size = 16384
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            // The entry points into the buffer: read it inside the closure, while the buffer lives.
            let (status, canonical) = buffer.withUnsafeMutableBufferPointer { buffer -> (Int32, String?) in
                var entry = passwd()
                var result: UnsafeMutablePointer<passwd>?
                let status = getpwnam_r(name, &entry, buffer.baseAddress!, buffer.count, &result)
                guard status == 0, result != nil, let canonical = entry.pw_name else { return (status, nil) }
                return (status, String(cString: canonical))
            }
            if status == ERANGE { size *= 2; continue }
            return canonical
        }
        return nil
    }
}
