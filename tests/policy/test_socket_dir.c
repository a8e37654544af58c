/* A squatted socket directory is refused by the broker and by clients:
 * inside a world-writable parent the directory must be a real directory,
 * owned by us, without group/other write (issue 13 item 3). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/socket_dir.h"

static char shared[256]; /* a stand-in for /tmp: world-writable, sticky */

static void setup(void)
{
    snprintf(shared, sizeof shared, "/tmp/vf-sockdir-XXXXXX");
    cr_assert_not_null(mkdtemp(shared));
    cr_assert_eq(chmod(shared, 01777), 0);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", shared);
    cr_assert_eq(system(cmd), 0);
}

static void path_in(char *out, size_t n, const char *dir)
{
    snprintf(out, n, "%s/%s/verifetch.sock", shared, dir);
}

static void subdir(const char *name, mode_t mode, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", shared, name);
    cr_assert_eq(mkdir(out, 0700), 0);
    cr_assert_eq(chmod(out, mode), 0);
}

TestSuite(socket_dir, .init = setup, .fini = teardown);

Test(socket_dir, absent_directory_is_created_private)
{
    char sock[512], err[512];
    path_in(sock, sizeof sock, "verifetch-1000");
    cr_assert_eq(vf_socket_dir_prepare(sock, err, sizeof err), 0, "%s", err);
    struct stat st;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/verifetch-1000", shared);
    cr_assert_eq(lstat(dir, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, 0700);
    cr_assert_eq(st.st_uid, geteuid());
    cr_assert_eq(vf_socket_dir_check(sock, err, sizeof err), 0, "%s", err);
}

Test(socket_dir, own_directory_without_group_write_is_kept_as_it_is)
{
    char dir[512], sock[512], err[512];
    subdir("own", 0750, dir, sizeof dir);
    path_in(sock, sizeof sock, "own");
    cr_assert_eq(vf_socket_dir_prepare(sock, err, sizeof err), 0, "%s", err);
    struct stat st;
    cr_assert_eq(stat(dir, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0750);
}

Test(socket_dir, group_or_other_writable_directory_is_refused)
{
    char dir[512], sock[512], err[512];
    subdir("open", 0777, dir, sizeof dir);
    path_in(sock, sizeof sock, "open");
    cr_assert_eq(vf_socket_dir_prepare(sock, err, sizeof err), -1);
    cr_assert(strstr(err, "writable by group or others"), "%s", err);
    cr_assert_eq(vf_socket_dir_check(sock, err, sizeof err), -1);
    subdir("group", 0770, dir, sizeof dir);
    path_in(sock, sizeof sock, "group");
    cr_assert_eq(vf_socket_dir_check(sock, err, sizeof err), -1);
}

Test(socket_dir, symlinked_directory_is_refused)
{
    char target[512], link[512], sock[512], err[512];
    subdir("real", 0700, target, sizeof target);
    snprintf(link, sizeof link, "%s/verifetch-link", shared);
    cr_assert_eq(symlink(target, link), 0);
    path_in(sock, sizeof sock, "verifetch-link");
    cr_assert_eq(vf_socket_dir_prepare(sock, err, sizeof err), -1);
    cr_assert(strstr(err, "symlink"), "%s", err);
    cr_assert_eq(vf_socket_dir_check(sock, err, sizeof err), -1);
}

Test(socket_dir, directory_owned_by_another_user_is_refused)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give a directory to another uid");
    char dir[512], sock[512], err[512];
    subdir("squatted", 0700, dir, sizeof dir);
    cr_assert_eq(chown(dir, 65534, 65534), 0);
    path_in(sock, sizeof sock, "squatted");
    cr_assert_eq(vf_socket_dir_prepare(sock, err, sizeof err), -1);
    cr_assert(strstr(err, "owned by uid 65534"), "%s", err);
    cr_assert_eq(vf_socket_dir_check(sock, err, sizeof err), -1);
}

Test(socket_dir, socket_planted_directly_in_a_shared_directory_is_refused_by_clients)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give a file to another uid");
    char sock[512], err[512];
    snprintf(sock, sizeof sock, "/tmp/vf-planted-%d.sock", (int)getpid());
    FILE *f = fopen(sock, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(chown(sock, 65534, 65534), 0);
    int rc = vf_socket_dir_check(sock, err, sizeof err);
    unlink(sock);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, "owned by uid 65534"), "%s", err);
}

Test(socket_dir, private_parents_are_not_second_guessed)
{
    char err[512];
    cr_assert_eq(vf_socket_dir_check("/run/verifetch/verifetch.sock", err, sizeof err), 0, "%s", err);
    cr_assert_eq(vf_socket_dir_check("relative.sock", err, sizeof err), 0, "%s", err);
}
