#include "cli/broker_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/config.h"
#include "policy/socket_dir.h"

char *vf_cli_socket_path(const char *flag)
{
    if (flag)
        return strdup(flag);
    const char *env = getenv("VERIFETCH_SOCKET");
    if (env && *env)
        return strdup(env);
    return vf_default_socket_path();
}

static size_t collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    vf_cli_response *r = userdata;
    size_t n = size * nmemb;
    if (r->len + n > VF_CLI_MAX_RESPONSE)
        return 0;
    char *grown = realloc(r->body, r->len + n + 1);
    if (!grown)
        return 0;
    memcpy(grown + r->len, ptr, n);
    r->body = grown;
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

static int progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const atomic_bool *cancel = clientp;
    return cancel && atomic_load(cancel) ? 1 : 0;
}

/* Say why the socket cannot be reached, the way a person would check it. */
static void explain(const char *path, const char *curl_says, char *out, size_t outlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == EACCES)
            snprintf(out, outlen, "permission denied: cannot reach %s (a directory on the way is not searchable)",
                     path);
        else
            snprintf(out, outlen, "no such socket: %s (is verifetchd running? set --socket or $VERIFETCH_SOCKET)",
                     path);
        return;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(out, outlen, "not a socket: %s", path);
        return;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int rc = -1, err = 0;
    if (fd >= 0 && strlen(path) < sizeof sa.sun_path) {
        memcpy(sa.sun_path, path, strlen(path) + 1);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        err = errno;
    }
    if (fd >= 0)
        close(fd);
    if (rc != 0 && (err == EACCES || err == EPERM))
        snprintf(out, outlen, "permission denied: %s (ask for the socket's group, or use your own verifetchd)",
                 path);
    else if (rc != 0 && err == ECONNREFUSED)
        snprintf(out, outlen, "connection refused: %s (a stale socket; verifetchd is not running)", path);
    else
        snprintf(out, outlen, "cannot talk to verifetchd at %s: %s", path, curl_says);
}

int vf_cli_request(const char *socket_path, const char *path, const char *body, const atomic_bool *cancel,
                   vf_cli_response *out)
{
    memset(out, 0, sizeof *out);
    char dir_err[sizeof out->error - 32];
    if (vf_socket_dir_check(socket_path, dir_err, sizeof dir_err) != 0) {
        snprintf(out->error, sizeof out->error, "not connecting: %s", dir_err);
        return -1;
    }
    CURL *h = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://localhost%s", path);
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    char errbuf[CURL_ERROR_SIZE] = "";
    if (!h || !headers) {
        snprintf(out->error, sizeof out->error, "out of memory");
        curl_slist_free_all(headers);
        if (h)
            curl_easy_cleanup(h);
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, socket_path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    if (cancel) {
        /* Abandoning the request closes the connection, which tells the broker too. */
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)cancel);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    CURLcode rc = curl_easy_perform(h);
    int ret = 0;
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        out->cancelled = 1;
        snprintf(out->error, sizeof out->error, "cancelled");
        ret = -1;
    } else if (rc == CURLE_COULDNT_CONNECT) {
        explain(socket_path, errbuf[0] ? errbuf : curl_easy_strerror(rc), out->error, sizeof out->error);
        ret = -1;
    } else if (rc != CURLE_OK) {
        snprintf(out->error, sizeof out->error, "verifetchd at %s: %s", socket_path,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
        ret = -1;
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->http);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    return ret;
}

void vf_cli_response_free(vf_cli_response *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
