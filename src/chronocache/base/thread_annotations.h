// Clang -Wthread-safety annotations; they document lock discipline and expand to nothing elsewhere.
#pragma once

#if defined(__clang__)
#define CC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CC_THREAD_ANNOTATION(x)
#endif

#define CC_GUARDED_BY(mu) CC_THREAD_ANNOTATION(guarded_by(mu))
// For the rare function that takes several locks in a loop, which the analysis cannot follow.
#define CC_NO_THREAD_SAFETY_ANALYSIS CC_THREAD_ANNOTATION(no_thread_safety_analysis)
