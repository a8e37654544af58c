/* Helper for test_paths: prints vf_default_worker_path() as seen from wherever
 * this binary was copied to, so the build-tree lookup can be exercised. */
#include <stdio.h>
#include <stdlib.h>

#include "policy/config.h"

int main(void)
{
    char *path = vf_default_worker_path();
    if (!path)
        return 1;
    printf("%s\n", path);
    free(path);
    return 0;
}
