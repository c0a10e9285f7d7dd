import CLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps every shared object a PAM transaction loaded in memory for the rest of the process's life.
///
/// `pam_end` unloads the service's modules, but a module may leave something behind that outlives
/// its code. `pam_sss` (SSSD before 2.9, SSSD issue 6505, fixed by pull request 6507) registers a
/// thread-specific-data destructor for its socket with `pthread_key_create`; after `pam_end` has
/// unloaded it, the next PAM thread that exits (every one of them when the portal stops) calls that
/// destructor at an address where no code is mapped any more, and the process dies with SIGSEGV.
/// Pinned here before `pam_end` (`RTLD_NODELETE`), a module's code stays mapped: its destructor
/// runs as its authors meant, and the next transaction finds the module loaded already.
final class LoadedModules: Sendable {
    /// Paths already pinned: each is opened once, not on every sign-in.
    private let pinned = Mutex<Set<String>>([])

    init() {}

    /// Pins every shared object loaded now that is not pinned yet. Call it while the PAM handle is
    /// still open, i.e. before `pam_end`.
    func pinAll() {
        for path in Self.loadedObjectPaths() where !pinned.withLock({ $0.contains(path) }) {
            // RTLD_NOLOAD: only an object loaded already (never loads one); RTLD_NODELETE: it is
            // never unloaded, even after this handle and PAM's are closed.
            guard let handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) else { continue }
            dlclose(handle)
            pinned.withLock { _ = $0.insert(path) }
        }
    }

    /// Whether `path` is pinned; for tests.
    func isPinned(_ path: String) -> Bool { pinned.withLock { $0.contains(path) } }

    /// The paths of the loaded shared objects (the executable and the vDSO, which have none to
    /// open, left out).
    static func loadedObjectPaths() -> [String] {
        var paths: [String] = []
        withUnsafeMutablePointer(to: &paths) { pointer in
            _ = clinux_each_loaded_object({ name, data in
                guard let name, name.pointee == UInt8(ascii: "/") else { return 0 }
                data?.assumingMemoryBound(to: [String].self).pointee.append(String(cString: name))
                return 0
            }, pointer)
        }
        return paths
    }
}
