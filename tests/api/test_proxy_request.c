/* What the credential proxy accepts from a (possibly compromised) worker. */
#include <criterion/criterion.h>
#include <string.h>

#include "broker/lookup/credential_proxy.h"
#include "broker/lookup/keyed_provider.h"

static const char *check(const char *head)
{
    return vf_proxy_check_request(head, strlen(head), "/v1/fetch?url=http%3A%2F%2Fx%2F", "api.test:8443");
}

Test(proxy_request, accepts_the_expected_request)
{
    cr_assert_null(check("GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\n"
                         "Accept: */*\r\n\r\n"));
}

Test(proxy_request, refuses_everything_else)
{
    const char *bad[] = {
        "POST /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\n\r\n",
        "GET /v1/other HTTP/1.1\r\nHost: api.test:8443\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fevil%2F HTTP/1.1\r\nHost: api.test:8443\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nAccept: */*\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\nHost: api.test:8443\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\nContent-Length: 5\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: x\r\n\r\n",
        "GET /v1/fetch?url=http%3A%2F%2Fx%2F HTTP/1.1\r\nHost: api.test:8443\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_not_null(check(bad[i]), "accepted: %s", bad[i]);
}

Test(proxy_request, endpoint_template_encodes_the_target)
{
    char *u = vf_keyed_endpoint_url("https://api.test/v1/fetch?url={url}&fmt=md", "http://x/a b?c=d&e");
    cr_assert_str_eq(u, "https://api.test/v1/fetch?url=http%3A%2F%2Fx%2Fa%20b%3Fc%3Dd%26e&fmt=md");
    free(u);
    /* A POST provider's endpoint may leave the target to the body. */
    u = vf_keyed_endpoint_url("https://api.test/v1/scrape", "http://x/");
    cr_assert_str_eq(u, "https://api.test/v1/scrape");
    free(u);
}
