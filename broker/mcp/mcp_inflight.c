#include "broker/mcp/mcp_inflight.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lookup/cancel.h"

typedef struct {
    char *key;                 /* "<tenant>\n<id as compact JSON>", NULL = free */
    struct vf_cancel *cancel;
} inflight_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static inflight_entry calls[VF_MCP_INFLIGHT_MAX];

/* Ids 7 and "7" are different requests: the JSON spelling keeps them apart. */
static char *key_of(const char *tenant, const json_t *id)
{
    char *idj = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    char *key = NULL;
    if (idj && asprintf(&key, "%s\n%s", tenant, idj) < 0)
        key = NULL;
    free(idj);
    return key;
}

int vf_mcp_inflight_begin(const char *tenant, const json_t *id, struct vf_cancel *cancel)
{
    char *key = id && cancel ? key_of(tenant, id) : NULL;
    if (!key)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < VF_MCP_INFLIGHT_MAX && slot < 0; i++)
        if (!calls[i].key) {
            calls[i] = (inflight_entry){ .key = key, .cancel = cancel };
            slot = i;
        }
    pthread_mutex_unlock(&lock);
    if (slot < 0)
        free(key);
    return slot;
}

void vf_mcp_inflight_end(int slot)
{
    if (slot < 0 || slot >= VF_MCP_INFLIGHT_MAX)
        return;
    pthread_mutex_lock(&lock);
    free(calls[slot].key);
    calls[slot] = (inflight_entry){ 0 };
    pthread_mutex_unlock(&lock);
}

bool vf_mcp_inflight_cancel(const char *tenant, const json_t *id)
{
    char *key = key_of(tenant, id);
    bool found = false;
    if (!key)
        return false;
    pthread_mutex_lock(&lock);
    /* Fired under the lock, so the token cannot be destroyed meanwhile. */
    for (int i = 0; i < VF_MCP_INFLIGHT_MAX; i++)
        if (calls[i].key && strcmp(calls[i].key, key) == 0) {
            vf_cancel_fire(calls[i].cancel);
            found = true;
        }
    pthread_mutex_unlock(&lock);
    free(key);
    return found;
}
