/* What the libraries a worker maps cost each fork: fork + _exit + wait,
 * repeated, in a process linked against the worker's full dependency list
 * (verifetch-bench-fork-full: with whichever libcurl the build gives the
 * worker, Debian's or the lean one of packaging/lean_curl.sh) and against a
 * minimal one (libc, OpenSSL, zlib and the codecs only:
 * verifetch-bench-fork-lean). Both are built from this file;
 * `meson test --benchmark fork_cost` runs them interleaved. The difference is
 * what the worker's remaining libraries (libxml2 with ICU and libstdc++, ...)
 * cost per worker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 300

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(int who)
{
    struct rusage r;
    getrusage(who, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "this process";
    FILE *f = fopen("/proc/self/maps", "re");
    unsigned maps = 0, libs = 0;
    char line[1024], last[1024] = "";
    while (f && fgets(line, sizeof line, f)) {
        maps++;
        const char *path = strchr(line, '/');
        if (path && strstr(path, ".so") && strcmp(path, last) != 0) {
            libs++;
            snprintf(last, sizeof last, "%s", path);
        }
    }
    if (f)
        fclose(f);
    static double wall[FORKS];
    double c0 = cpu_ms(RUSAGE_SELF) + cpu_ms(RUSAGE_CHILDREN);
    for (int i = 0; i < FORKS; i++) {
        double t0 = now_ms();
        pid_t p = fork();
        if (p == 0)
            _exit(0);
        if (p < 0 || waitpid(p, NULL, 0) != p) {
            perror("fork");
            return 1;
        }
        wall[i] = now_ms() - t0;
    }
    double c1 = cpu_ms(RUSAGE_SELF) + cpu_ms(RUSAGE_CHILDREN);
    qsort(wall, FORKS, sizeof wall[0], cmp_double);
    printf("%-5s %3u mappings, %2u shared objects: fork+exit+wait wall median %.3f ms, CPU %.3f ms per fork\n",
           label, maps, libs, wall[FORKS / 2], (c1 - c0) / FORKS);
    return 0;
}
