// Counts heap allocations of a process, for the benchmarks' "allocations per cycle".
//
// Loaded with LD_PRELOAD into the server under test (scripts/bench-portal.sh,
// scripts/bench-verification.sh). Every malloc, calloc, realloc, posix_memalign, aligned_alloc,
// memalign and valloc adds one to a counter and is passed on to glibc's own functions
// (__libc_malloc and friends, so no dlsym and no recursion). A thread writes the counter to the
// file named by MALLOC_COUNT_FILE every 20 ms; the CPU sampler (capture_cycle.py cpu-window)
// reads it at the start and the end of the measured window, as it reads the CPU times.
//
// Build: cc -O2 -shared -fPIC -o malloc_count.so malloc_count.c -lpthread
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_ulong allocations;

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { count(); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL && size != 0) return ENOMEM;
    *out = p;
    return 0;
}

static void *writer(void *arg) {
    int fd = (int)(long)arg;
    char line[32];
    struct timespec interval = {0, 20 * 1000 * 1000};
    for (;;) {
        int n = snprintf(line, sizeof line, "%20lu\n", atomic_load_explicit(&allocations, memory_order_relaxed));
        if (pwrite(fd, line, (size_t)n, 0) != n) return NULL;
        nanosleep(&interval, NULL);
    }
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (path == NULL || *path == 0) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    // Only this process: its children (if any) must not overwrite the file.
    unsetenv("MALLOC_COUNT_FILE");
    unsetenv("LD_PRELOAD");
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attributes, writer, (void *)(long)fd);
    pthread_attr_destroy(&attributes);
}
