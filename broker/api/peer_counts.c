#include "broker/api/peer_counts.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct peer {
    struct peer *next;
    uid_t uid;
    unsigned open;
} peer;

struct vf_peer_counts {
    pthread_mutex_t lock;
    unsigned limit;
    peer *peers;   /* local uids: few */
};

vf_peer_counts *vf_peer_counts_new(unsigned limit)
{
    vf_peer_counts *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->limit = limit;
    return p;
}

void vf_peer_counts_free(vf_peer_counts *p)
{
    if (!p)
        return;
    while (p->peers) {
        peer *e = p->peers;
        p->peers = e->next;
        free(e);
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static peer *find(vf_peer_counts *p, uid_t uid)
{
    for (peer *e = p->peers; e; e = e->next)
        if (e->uid == uid)
            return e;
    return NULL;
}

bool vf_peer_counts_add(vf_peer_counts *p, uid_t uid)
{
    pthread_mutex_lock(&p->lock);
    peer *e = find(p, uid);
    if (!e && (e = calloc(1, sizeof *e))) {
        e->uid = uid;
        e->next = p->peers;
        p->peers = e;
    }
    bool ok = e && e->open < p->limit;
    if (e)
        e->open++;
    pthread_mutex_unlock(&p->lock);
    return ok;
}

void vf_peer_counts_remove(vf_peer_counts *p, uid_t uid)
{
    pthread_mutex_lock(&p->lock);
    peer *e = find(p, uid);
    if (e && e->open)
        e->open--;
    pthread_mutex_unlock(&p->lock);
}
