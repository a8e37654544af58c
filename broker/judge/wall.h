/* Wall families: the named reasons a page that arrived is not the content
 * (reported as attempts_log[].wall and in the detail). */
#ifndef VERIFETCH_WALL_H
#define VERIFETCH_WALL_H

#include <stdbool.h>

typedef enum {
    VF_WALL_NONE = 0,
    VF_WALL_BOT_CHALLENGE,
    VF_WALL_ACCESS_DENIED,
    VF_WALL_RATE_LIMITED,
    VF_WALL_CONSENT,
    VF_WALL_PAYWALL,
    VF_WALL_LOGIN,
    VF_WALL_SOFT_404,
    VF_WALL_JS_REQUIRED,
    VF_WALL_EMPTY,
    VF_WALL_TOO_SHORT,
    VF_WALL_COUNT,
} vf_wall;

#define VF_WALL_BIT(w) (1u << (unsigned)(w))

/* "bot_challenge", "access_denied", "rate_limited", "consent_wall", "paywall",
 * "login_wall", "soft_404", "js_required", "empty", "too_short"; NULL for NONE. */
const char *vf_wall_name(vf_wall w);

/* The family named name, or VF_WALL_NONE when there is none. */
vf_wall vf_wall_from_name(const char *name);

/* Families a tenant may switch off (classify.disable): every one judged from
 * page signals; "empty" and "too_short" follow the caller's min_chars instead. */
bool vf_wall_can_disable(vf_wall w);

#endif
