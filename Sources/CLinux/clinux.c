#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include <sys/prctl.h>
#include "clinux.h"

int clinux_set_dumpable(int value) { return prctl(PR_SET_DUMPABLE, value, 0, 0, 0); }

struct clinux_visit { int (*visit)(const char *, void *); void *data; };

static int clinux_visit_one(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct clinux_visit *visit = data;
    return visit->visit(info->dlpi_name, visit->data);
}

int clinux_each_loaded_object(int (*visit)(const char *, void *), void *data) {
    struct clinux_visit state = { visit, data };
    return dl_iterate_phdr(clinux_visit_one, &state);
}
