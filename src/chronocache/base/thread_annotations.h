// Clang -Wthread-safety annotations; they document lock discipline and expand to nothing elsewhere.
#pragma once

#if defined(__clang__)
#define CC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CC_THREAD_ANNOTATION(x)
#endif

#define CC_GUARDED_BY(mu) CC_THREAD_ANNOTATION(guarded_by(mu))
