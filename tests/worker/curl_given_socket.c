#include "curl_given_socket.h"

curl_socket_t given_socket_open(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose, (void)a;
    int *fd = clientp;
    int s = *fd;
    *fd = -1; /* exactly once */
    return s >= 0 ? s : CURL_SOCKET_BAD;
}

int given_socket_connected(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
    (void)clientp, (void)fd, (void)purpose;
    return CURL_SOCKOPT_ALREADY_CONNECTED;
}

size_t given_socket_discard(char *p, size_t size, size_t n, void *u)
{
    (void)p, (void)u;
    return size * n;
}
