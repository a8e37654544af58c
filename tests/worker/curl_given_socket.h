/* A libcurl fetch over a socket already connected, as the worker does with
 * the fd the broker passed it. Compiled into each test beside the libcurl it
 * links (system or lean). */
#ifndef VERIFETCH_TESTS_CURL_GIVEN_SOCKET_H
#define VERIFETCH_TESTS_CURL_GIVEN_SOCKET_H

#include <curl/curl.h>

/* GETs url over *sock (given to curl once, then -1), body discarded,
 * 5 s at most. */
CURLcode given_socket_fetch(int *sock, const char *url);

#endif
