#include "broker/judge/wall.h"

#include <string.h>

static const char *const names[VF_WALL_COUNT] = {
    [VF_WALL_NONE] = NULL,
    [VF_WALL_BOT_CHALLENGE] = "bot_challenge",
    [VF_WALL_ACCESS_DENIED] = "access_denied",
    [VF_WALL_RATE_LIMITED] = "rate_limited",
    [VF_WALL_CONSENT] = "consent_wall",
    [VF_WALL_PAYWALL] = "paywall",
    [VF_WALL_LOGIN] = "login_wall",
    [VF_WALL_SOFT_404] = "soft_404",
    [VF_WALL_JS_REQUIRED] = "js_required",
    [VF_WALL_EMPTY] = "empty",
    [VF_WALL_TOO_SHORT] = "too_short",
};

const char *vf_wall_name(vf_wall w)
{
    return (unsigned)w < VF_WALL_COUNT ? names[w] : NULL;
}

vf_wall vf_wall_from_name(const char *name)
{
    for (unsigned w = 1; name && w < VF_WALL_COUNT; w++)
        if (strcmp(names[w], name) == 0)
            return (vf_wall)w;
    return VF_WALL_NONE;
}

bool vf_wall_can_disable(vf_wall w)
{
    return w != VF_WALL_NONE && w != VF_WALL_EMPTY && w != VF_WALL_TOO_SHORT && w < VF_WALL_COUNT;
}
