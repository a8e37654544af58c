#include "curl_given_socket.h"

#include <stddef.h>

static curl_socket_t open_given(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose, (void)a;
    int *fd = clientp;
    int s = *fd;
    *fd = -1; /* exactly once */
    return s >= 0 ? s : CURL_SOCKET_BAD;
}

static int already_connected(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
    (void)clientp, (void)fd, (void)purpose;
    return CURL_SOCKOPT_ALREADY_CONNECTED;
}

static size_t discard(char *p, size_t size, size_t n, void *u)
{
    (void)p, (void)u;
    return size * n;
}

CURLcode given_socket_fetch(int *sock, const char *url)
{
    CURL *c = curl_easy_init();
    if (!c)
        return CURLE_FAILED_INIT;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_given);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, sock);
    curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, already_connected);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    return rc;
}
