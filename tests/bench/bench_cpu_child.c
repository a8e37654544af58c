/* A stand-in zygote for test_bench_cpu.c: started as
 *   bench_cpu_child --zygote MS
 * (the command line the benchmark's /proc readers know a zygote by), it
 * spends MS milliseconds of CPU, says "ready" on stdout, and exits when its
 * stdin closes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--zygote") != 0) {
        fprintf(stderr, "usage: %s --zygote MS\n", argv[0]);
        return 2;
    }
    double until = cpu_ms() + atof(argv[2]);
    volatile unsigned long spin = 0;
    while (cpu_ms() < until)
        spin++;
    if (write(STDOUT_FILENO, "ready\n", 6) != 6)
        return 1;
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    return 0;
}
