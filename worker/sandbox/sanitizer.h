/* VF_UNDER_ASAN is defined when AddressSanitizer instruments this build (GCC
 * spells it __SANITIZE_ADDRESS__, clang __has_feature). */
#ifndef VERIFETCH_WORKER_SANITIZER_H
#define VERIFETCH_WORKER_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define VF_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VF_UNDER_ASAN 1
#endif
#endif

#endif
