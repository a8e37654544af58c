#include "config_fixture.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

char fx_dir[64];
char fx_conf[128];

void fx_setup(void)
{
    snprintf(fx_dir, sizeof fx_dir, "/tmp/vf-policy-XXXXXX");
    cr_assert_not_null(mkdtemp(fx_dir), "mkdtemp failed");
    snprintf(fx_conf, sizeof fx_conf, "%s/t.conf", fx_dir);
    cr_assert_eq(setenv("VF_TEST_ENV_KEY", FX_SECRET, 1), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void fx_teardown(void)
{
    if (fx_dir[0])
        nftw(fx_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

char *fx_write(const char *name, const char *content, size_t len, mode_t mode)
{
    char *path = NULL;
    cr_assert_geq(asprintf(&path, "%s/%s", fx_dir, name), 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0, "cannot create %s", path);
    cr_assert_eq(write(fd, content, len), (ssize_t)len);
    cr_assert_eq(fchmod(fd, mode), 0);
    close(fd);
    return path;
}

char *fx_key_file(void)
{
    return fx_write("fetcher.key", FX_SECRET "\n", strlen(FX_SECRET) + 1, 0600);
}

static void write_conf(const char *fmt, va_list ap)
{
    char *text = NULL;
    cr_assert_geq(vasprintf(&text, fmt, ap), 0);
    FILE *f = fopen(fx_conf, "we");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
}

int fx_load(vf_config *cfg, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_conf(fmt, ap);
    va_end(ap);
    err[0] = '\0';
    return vf_config_load(fx_conf, cfg, err, errlen);
}

void fx_expect_error(int line, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_conf(fmt, ap);
    va_end(ap);

    vf_config cfg;
    char err[2048] = "";
    int rc = vf_config_load(fx_conf, &cfg, err, sizeof err);
    cr_assert_eq(rc, -1, "config should have been rejected (expected \"%s\")", what);
    char where[300];
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d: ", fx_conf, line);
    else
        snprintf(where, sizeof where, "%s: ", fx_conf);
    cr_assert(strncmp(err, where, strlen(where)) == 0 && strstr(err + strlen(where), what) != NULL,
              "\nexpected: %s...%s\n     got: %s", where, what, err);
    cr_assert(strstr(err, FX_SECRET) == NULL, "error message leaks the key: %s", err);
    cr_assert(strchr(err, '\n') == NULL, "error must be one line: %s", err);
    cr_assert_null(cfg.tenants, "a failed load leaves nothing behind");
    cr_assert_eq(cfg.n_tenants, 0);
    cr_assert_null(cfg.socket_path);
}
