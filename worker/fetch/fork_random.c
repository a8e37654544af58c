#include "worker/fetch/fork_random.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define N_DRBGS 3

/* Each DRBG's own reseed interval in draws, as the zygote found it. */
static unsigned zygote_interval[N_DRBGS];
static bool armed, in_worker;

/* Parent first: a child's reseed draws from the primary. */
static EVP_RAND_CTX *drbg(int i)
{
    return i == 0 ? RAND_get0_primary(NULL) : i == 1 ? RAND_get0_public(NULL) : RAND_get0_private(NULL);
}

static bool set_interval(EVP_RAND_CTX *ctx, unsigned draws)
{
    OSSL_PARAM p[] = { OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &draws),
                       OSSL_PARAM_construct_end() };
    return EVP_RAND_CTX_set_params(ctx, p) == 1;
}

bool vf_fork_random_arm(void)
{
    for (int i = 0; i < N_DRBGS; i++) {
        EVP_RAND_CTX *ctx = drbg(i);
        OSSL_PARAM p[] = { OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &zygote_interval[i]),
                           OSSL_PARAM_construct_end() };
        /* One draw per reseed: the generate counter starts at 1, and a
         * DRBG reseeds once it reaches the interval. */
        if (!ctx || EVP_RAND_CTX_get_params(ctx, p) != 1 || !set_interval(ctx, 1))
            return false;
    }
    armed = true;
    return true;
}

void vf_fork_random_in_worker(void)
{
    in_worker = true;
}

void vf_fork_random_settle(void)
{
    if (!armed || !in_worker)
        return;
    armed = false;
    for (int i = 0; i < N_DRBGS; i++) {
        EVP_RAND_CTX *ctx = drbg(i);
        /* If a reseed or the reset fails, the DRBG stays armed: every draw
         * then reseeds, slower but never from inherited state. */
        if (EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 1)
            (void)set_interval(ctx, zygote_interval[i]);
    }
}
