/* libcurl callbacks for tests that hand curl a socket already connected,
 * as the worker does with the fd the broker passed it. Compiled into each
 * test beside the libcurl it links (system or lean). */
#ifndef VERIFETCH_TESTS_CURL_GIVEN_SOCKET_H
#define VERIFETCH_TESTS_CURL_GIVEN_SOCKET_H

#include <curl/curl.h>
#include <stddef.h>

/* CURLOPT_OPENSOCKETFUNCTION: clientp is an int * holding the fd; it is
 * given out once, then CURL_SOCKET_BAD. */
curl_socket_t given_socket_open(void *clientp, curlsocktype purpose, struct curl_sockaddr *a);
/* CURLOPT_SOCKOPTFUNCTION: the socket is connected already. */
int given_socket_connected(void *clientp, curl_socket_t fd, curlsocktype purpose);
/* CURLOPT_WRITEFUNCTION that keeps nothing. */
size_t given_socket_discard(char *p, size_t size, size_t n, void *u);

#endif
