/* The zygote's rehearsed handshake must really complete (verified chain and
 * host name, data both ways); a silent failure would leave every worker
 * paying for OpenSSL's first handshake again. */
#include <criterion/criterion.h>
#include <openssl/err.h>

#include "worker/fetch/tls_rehearsal.h"

Test(tls_rehearsal, completes_a_verified_handshake)
{
    cr_assert(vf_tls_rehearse(), "rehearsal failed: %s", ERR_error_string(ERR_peek_last_error(), NULL));
    /* Nothing is left behind that would make a second one fail. */
    cr_assert(vf_tls_rehearse());
    cr_assert_eq(ERR_peek_error(), 0ul, "OpenSSL error queue not empty after the rehearsal");
}
