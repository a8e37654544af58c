/* SIGHUP reload: the settings that only take effect at start-up (the
 * listening sockets, the worker executable and the zygote built from it with
 * its CA) are not silently ignored. A reload keeps their running values in
 * the new snapshot and names each one that changed, with a warning that it
 * needs a restart. */
#ifndef VERIFETCH_RELOAD_GUARD_H
#define VERIFETCH_RELOAD_GUARD_H

#include <stddef.h>

#include "policy/config.h"

/* Copies running's restart-only settings into next where they differ and
 * logs a warning for each. Returns how many differed (names, comma-separated,
 * into changed), or -1 when out of memory (next is then unusable). */
int vf_reload_keep_restart_settings(const vf_config *running, vf_config *next, char *changed, size_t len);

#endif
