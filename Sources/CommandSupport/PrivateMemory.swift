import CLinux

/// Keeps the process's memory to itself. It holds the server secret, the checkpoint key, and for
/// moments the passwords people type and the teleTANs issued; a core dump (225 MB, written when
/// the process crashed) held them all.
package enum PrivateMemory {
    /// Makes the process non-dumpable (`PR_SET_DUMPABLE` 0): the kernel writes no core file for
    /// it, and no other process of the same user may read its memory or attach a debugger
    /// (`/proc/PID/mem` and the like belong to root from then on). Root still can. Returns false
    /// if the kernel refused, which it does not on Linux.
    @discardableResult
    package static func forbidCoreDumpsAndTracing() -> Bool {
        clinux_set_dumpable(0) == 0
    }
}
