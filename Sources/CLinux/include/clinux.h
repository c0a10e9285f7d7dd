// Linux calls that Swift's Glibc module does not export: prctl is variadic, and dl_iterate_phdr
// needs _GNU_SOURCE (which would clash with the Glibc module if defined in a header). Small
// wrappers with fixed arguments, compiled in clinux.c.
#ifndef CLINUX_H
#define CLINUX_H

int clinux_set_dumpable(int value);

// Calls `visit` with the path of every loaded shared object ("" for the executable) until it
// returns non-zero.
int clinux_each_loaded_object(int (*visit)(const char *path, void *data), void *data);

#endif
